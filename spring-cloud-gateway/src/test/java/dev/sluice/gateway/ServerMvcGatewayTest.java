package dev.sluice.gateway;

import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;
import static org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions.http;

import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The contract on the Server MVC gateway: {@code /limited/**} and {@code /ruled/**} are Java DSL
 * routes limited by {@link SluiceFilterFunctions#rateLimit}, {@code /named/**} a route of
 * {@code spring.cloud.gateway.server.webmvc.routes} with the {@code RateLimit} filter.
 */
@SpringBootTest(classes = ServerMvcGatewayTest.Gateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.main.web-application-type=servlet",
            // The WebFlux gateway, on the class path for the other tests, refuses to start beside Spring MVC.
            "spring.cloud.gateway.server.webflux.enabled=false",
            "spring.cloud.gateway.server.webmvc.routes[0].id=named",
            "spring.cloud.gateway.server.webmvc.routes[0].uri=${backend.uri}",
            "spring.cloud.gateway.server.webmvc.routes[0].predicates[0]=Path=/named/**",
            "spring.cloud.gateway.server.webmvc.routes[0].filters[0].name=RateLimit",
            "spring.cloud.gateway.server.webmvc.routes[0].filters[0].args.limiter=partner",
            "spring.cloud.gateway.server.webmvc.routes[0].filters[0].args.key="
                    + "#request.headers().firstHeader('X-Api-Key')",
            "spring.cloud.gateway.server.webmvc.routes[0].filters[0].args.plan="
                    + "#request.headers().firstHeader('X-Api-Key').startsWith('pro-') ? 'pro' : null",
        })
class ServerMvcGatewayTest extends GatewayRouteLimitsContract {

    @DynamicPropertySource
    static void ruleKey(DynamicPropertyRegistry registry) {
        // In the registry of the contract's rule: a list is bound from one property source.
        registry.add("sluice.http.rules[0].key", () -> "#request.getHeader('X-Api-Key')");
    }

    /** A Server MVC gateway. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Gateway {

        @Bean
        RouterFunction<ServerResponse> limited(@Value("${backend.uri}") String backend) {
            return route("limited")
                    .GET("/limited/**", http())
                    .before(uri(backend))
                    .filter(SluiceFilterFunctions.rateLimit(limit -> limit.name("limited")
                            .tier(3, Duration.ofMinutes(1))
                            .key(request -> request.headers().firstHeader("X-Api-Key"))))
                    .build();
        }

        @Bean
        RouterFunction<ServerResponse> ruled(@Value("${backend.uri}") String backend) {
            return route("ruled").GET("/ruled/**", http()).before(uri(backend)).build();
        }
    }
}
