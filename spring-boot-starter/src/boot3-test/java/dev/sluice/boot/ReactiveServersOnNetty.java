package dev.sluice.boot;

import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.reactive.context.ReactiveWebServerApplicationContext;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starts every reactive application of the Spring Boot 3.5 line's tests on Reactor Netty, as
 * Spring Boot 4 does. With Tomcat also on the test class path, Spring Boot 3.5 would start
 * WebFlux on Tomcat 10.1, whose asynchronous requests now and then fail inside Tomcat ("Calling
 * [asyncOperation()] is not valid for a request with Async state [COMPLETING]") and close the
 * connection unanswered. Listed in this line's test {@code META-INF/spring.factories}.
 */
public class ReactiveServersOnNetty implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        if (context instanceof ReactiveWebServerApplicationContext reactive) {
            reactive.registerBean(NettyReactiveWebServerFactory.class);
        }
    }
}
