package dev.sluice.gateway;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The contract on the WebFlux gateway: routes from properties, limited by {@code sluiceRateLimiter}. */
@SpringBootTest(classes = WebFluxGatewayTest.Gateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.main.web-application-type=reactive",
            "spring.cloud.gateway.server.webflux.routes[0].id=limited",
            "spring.cloud.gateway.server.webflux.routes[0].uri=${backend.uri}",
            "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/limited/**",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].name=RequestRateLimiter",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.rate-limiter=#{@sluiceRateLimiter}",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.key-resolver=#{@sluiceKeyResolver}",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.sluice-rate-limiter.key="
                    + "#request.headers.getFirst('X-Api-Key')",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.sluice-rate-limiter.tiers[0].limit=3",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.sluice-rate-limiter.tiers[0].window=1m",
            "spring.cloud.gateway.server.webflux.routes[1].id=named",
            "spring.cloud.gateway.server.webflux.routes[1].uri=${backend.uri}",
            "spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/named/**",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].name=RequestRateLimiter",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].args.rate-limiter=#{@sluiceRateLimiter}",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].args.key-resolver=#{@apiKeyResolver}",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].args.sluice-rate-limiter.limiter=partner",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].args.sluice-rate-limiter.plan="
                    + "#request.headers.getFirst('X-Api-Key').startsWith('pro-') ? 'pro' : null",
            "spring.cloud.gateway.server.webflux.routes[2].id=ruled",
            "spring.cloud.gateway.server.webflux.routes[2].uri=${backend.uri}",
            "spring.cloud.gateway.server.webflux.routes[2].predicates[0]=Path=/ruled/**",
        })
class WebFluxGatewayTest extends GatewayRouteLimitsContract {

    @DynamicPropertySource
    static void ruleKey(DynamicPropertyRegistry registry) {
        // In the registry of the contract's rule: a list is bound from one property source.
        registry.add("sluice.http.rules[0].key", () -> "#request.headers.getFirst('X-Api-Key')");
    }

    /** A WebFlux gateway; the route {@code named} keys requests by a {@code KeyResolver} of its own. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Gateway {

        @org.springframework.context.annotation.Bean
        org.springframework.cloud.gateway.filter.ratelimit.KeyResolver apiKeyResolver() {
            return exchange -> reactor.core.publisher.Mono.justOrEmpty(
                    exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
        }
    }
}
