package dev.sluice.gateway.docs;

import dev.sluice.annotation.Algorithm;
import dev.sluice.gateway.SluiceGatewayRateLimiter;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The WebFlux gateway's Java DSL routes of docs/spring-cloud-gateway.md. */
@Configuration(proxyBeanMethods = false)
public class WebFluxGatewayRoutes {

    // tag::webflux-java-dsl[]
    @Bean
    RouteLocator limitedRoutes(RouteLocatorBuilder builder, SluiceGatewayRateLimiter sluiceRateLimiter,
                               KeyResolver apiKeyResolver, @Value("${orders.uri}") String orders,
                               @Value("${partner.uri}") String partner) {
        return builder.routes()
                .route("orders", route -> route.path("/orders/**")
                        .filters(filters -> filters.requestRateLimiter()
                                .rateLimiter(SluiceGatewayRateLimiter.class, sluice -> sluice
                                        .tier(10, Duration.ofSeconds(1))         // the route's own tiers
                                        .tier(300, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW)
                                        .keyExpression("#ip"))
                                .configure(limit -> limit.setRateLimiter(sluiceRateLimiter)))
                        .uri(orders))
                .route("partner-api", route -> route.path("/partner/**")
                        .filters(filters -> filters.requestRateLimiter()
                                .rateLimiter(SluiceGatewayRateLimiter.class, sluice -> sluice
                                        .limiter("partner")                      // a limiter of sluice.limits
                                        .plan("@plans.of(#request.headers.getFirst('X-Api-Key'))"))
                                .configure(limit -> limit.setRateLimiter(sluiceRateLimiter)
                                        .setKeyResolver(apiKeyResolver)))
                        .uri(partner))
                .build();
    }
    // end::webflux-java-dsl[]
}
