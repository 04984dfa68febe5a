package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.gateway.event.RefreshRoutesEvent;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.handler.predicate.PredicateDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteDefinitionWriter;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.publisher.Mono;

/** The contract on the WebFlux gateway: routes from properties, limited by {@code sluiceRateLimiter}. */
@SpringBootTest(classes = WebFluxGatewayTest.Gateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.main.web-application-type=reactive",
            "spring.cloud.gateway.server.webflux.routes[0].id=limited",
            "spring.cloud.gateway.server.webflux.routes[0].uri=${backend.uri}",
            "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/limited/**",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].name=RequestRateLimiter",
            // A key expression: no key resolver needed.
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.rate-limiter=#{@sluiceRateLimiter}",
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

    @Autowired
    RouteDefinitionWriter routes;

    @Autowired
    ApplicationEventPublisher events;

    @Autowired
    RateLimiterRegistry registry;

    @Value("${backend.uri}")
    String backendUri;

    @Test
    void aRouteDefinedAgainWhileTheGatewayRunsTakesItsNewTiersWithTheCountsKept() {
        define("posted", 2);
        GatewayClient client = new GatewayClient(port);
        assertThat(client.get("/posted/items", "carol").statusCode()).isEqualTo(200);
        assertThat(client.get("/posted/items", "carol").statusCode()).isEqualTo(200);
        assertThat(client.get("/posted/items", "carol").statusCode()).isEqualTo(429);

        define("posted", 3);

        assertThat(client.get("/posted/items", "carol").statusCode()).as("raised to 3, 2 used").isEqualTo(200);
        assertThat(client.get("/posted/items", "carol").statusCode()).isEqualTo(429);
    }

    @Test
    void aRouteRemovedWhileTheGatewayRunsTakesItsLimiterAlong() {
        define("removed", 1);
        GatewayClient client = new GatewayClient(port);
        assertThat(client.get("/removed/items", "dave").statusCode()).isEqualTo(200);

        routes.delete(Mono.just("removed")).block(Duration.ofSeconds(10));
        events.publishEvent(new RefreshRoutesEvent(this));
        awaitRoutes(() -> registry.find("removed").isEmpty());

        // Defined again with other tiers: a limiter of its own, with the counts the store holds for the route.
        define("removed", 2);
        assertThat(client.get("/removed/items", "dave").statusCode()).as("2 a minute, 1 used").isEqualTo(200);
        assertThat(client.get("/removed/items", "dave").statusCode()).isEqualTo(429);
    }

    /** Posts a route with a limit a minute, as the gateway's actuator does, and refreshes. */
    private void define(String id, int limit) {
        RouteDefinition route = new RouteDefinition();
        route.setId(id);
        route.setUri(URI.create(backendUri));
        route.setPredicates(List.of(new PredicateDefinition("Path=/" + id + "/**")));
        FilterDefinition filter = new FilterDefinition("RequestRateLimiter");
        filter.setArgs(new LinkedHashMap<>(Map.of("rate-limiter", "#{@sluiceRateLimiter}",
                "key-resolver", "#{@sluiceKeyResolver}",
                "sluice-rate-limiter.key", "#request.headers.getFirst('X-Api-Key')",
                "sluice-rate-limiter.tiers[0].limit", String.valueOf(limit),
                "sluice-rate-limiter.tiers[0].window", "1m")));
        route.setFilters(List.of(filter));
        routes.save(Mono.just(route)).block(Duration.ofSeconds(10));
        events.publishEvent(new RefreshRoutesEvent(this));
        awaitRoutes(() -> registry.find(id).map(limiter -> limiter.tiers().get(0).limit() == limit).orElse(false));
    }

    private static void awaitRoutes(BooleanSupplier refreshed) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!refreshed.getAsBoolean()) {
            assertThat(System.nanoTime()).as("the routes refreshed within 10 s").isLessThan(deadline);
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
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
