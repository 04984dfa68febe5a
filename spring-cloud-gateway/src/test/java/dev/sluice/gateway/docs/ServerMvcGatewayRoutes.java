package dev.sluice.gateway.docs;

import static dev.sluice.gateway.SluiceFilterFunctions.rateLimit;
import static org.springframework.cloud.gateway.server.mvc.filter.BeforeFilterFunctions.uri;
import static org.springframework.cloud.gateway.server.mvc.handler.GatewayRouterFunctions.route;
import static org.springframework.cloud.gateway.server.mvc.handler.HandlerFunctions.http;

import dev.sluice.annotation.Algorithm;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/** The Server MVC gateway's Java DSL routes of docs/spring-cloud-gateway.md: those of the WebFlux example. */
@Configuration(proxyBeanMethods = false)
public class ServerMvcGatewayRoutes {

    // tag::server-mvc-java-dsl[]
    @Bean
    RouterFunction<ServerResponse> orders(@Value("${orders.uri}") String orders) {
        return route("orders")
                .GET("/orders/**", http())
                .before(uri(orders))
                .filter(rateLimit(limit -> limit.name("orders")          // the limiter of the route's own tiers
                        .tier(10, Duration.ofSeconds(1))
                        .tier(300, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW)
                        .keyExpression("#ip")))
                .build();
    }

    @Bean
    RouterFunction<ServerResponse> partnerApi(@Value("${partner.uri}") String partner) {
        return route("partner-api")
                .GET("/partner/**", http())
                .before(uri(partner))
                .filter(rateLimit(limit -> limit.limiter("partner")      // a limiter of sluice.limits
                        .key(request -> request.headers().firstHeader("X-Api-Key"))
                        .plan("@plans.of(#request.headers().firstHeader('X-Api-Key'))")))
                .build();
    }
    // end::server-mvc-java-dsl[]
}
