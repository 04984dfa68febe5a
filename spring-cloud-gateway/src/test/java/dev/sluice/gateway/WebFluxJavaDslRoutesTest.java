package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.gateway.docs.ApiKeys;
import dev.sluice.gateway.docs.Plans;
import dev.sluice.gateway.docs.WebFluxGatewayRoutes;
import dev.sluice.tck.MutableClock;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * WebFlux gateway routes of the Java DSL limited by {@code sluiceRateLimiter}: those of the
 * documentation ({@link WebFluxGatewayRoutes}), whose Sluice options are given with
 * {@code rateLimiter(SluiceGatewayRateLimiter.class, ...)}, are limited by them, and a route naming
 * {@code sluiceRateLimiter} without options, or with options that do not hold, fails start-up
 * naming the route rather than its first request.
 */
class WebFluxJavaDslRoutesTest {

    /** The start of a minute, where the route's fixed window of a minute starts. */
    private static final MutableClock CLOCK = new MutableClock(Instant.parse("2030-01-01T00:00:00Z"));
    private static final Backend BACKEND = Backend.start();

    private static ConfigurableApplicationContext gateway;

    /** Decides in memory, by the test's clock. */
    static class Store {

        @Bean
        RateLimitStore javaDslStore() {
            return InMemoryRateLimitStore.builder().clock(CLOCK).build();
        }
    }

    /** A WebFlux gateway with the documentation's Java DSL routes. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Store.class, ApiKeys.class, Plans.class, WebFluxGatewayRoutes.class})
    static class Gateway {
    }

    /** A Java DSL route naming {@code sluiceRateLimiter} in the filter's own configuration only. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Store.class)
    static class WithoutOptions {

        @Bean
        RouteLocator bareRoute(RouteLocatorBuilder builder, SluiceGatewayRateLimiter sluiceRateLimiter,
                               @Value("${orders.uri}") String orders) {
            return builder.routes()
                    .route("bare", route -> route.path("/bare/**")
                            .filters(filters -> filters.requestRateLimiter(limit -> limit.setRateLimiter(sluiceRateLimiter)))
                            .uri(orders))
                    .build();
        }
    }

    /** A Java DSL route naming a limiter that {@code sluice.limits} does not configure. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Store.class)
    static class UnknownLimiter {

        @Bean
        RouteLocator misnamedRoute(RouteLocatorBuilder builder, SluiceGatewayRateLimiter sluiceRateLimiter,
                                   @Value("${orders.uri}") String orders) {
            return builder.routes()
                    .route("misnamed", route -> route.path("/misnamed/**")
                            .filters(filters -> filters.requestRateLimiter()
                                    .rateLimiter(SluiceGatewayRateLimiter.class, sluice -> sluice.limiter("nowhere"))
                                    .configure(limit -> limit.setRateLimiter(sluiceRateLimiter)))
                            .uri(orders))
                    .build();
        }
    }

    @BeforeAll
    static void startGateway() {
        gateway = start(Gateway.class, "partner.uri=" + BACKEND.uri(),
                "sluice.limits.partner.tiers[0].limit=2", "sluice.limits.partner.tiers[0].window=1m",
                "sluice.limits.partner.plans.gold.tiers[0].limit=4", "sluice.limits.partner.plans.gold.tiers[0].window=1m");
    }

    private static ConfigurableApplicationContext start(Class<?> application, String... properties) {
        return new SpringApplicationBuilder(application).web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "orders.uri=" + BACKEND.uri())
                .properties(properties)
                .run();
    }

    @AfterAll
    static void stop() {
        gateway.close();
        BACKEND.close();
    }

    private static List<HttpResponse<String>> send(int times, String path, String apiKey) {
        GatewayClient client = new GatewayClient(Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port")));
        return IntStream.range(0, times).mapToObj(i -> client.get(path, apiKey)).toList();
    }

    @Test
    void aRouteWithTiersOfItsOwnCountsEachClientAddress() {
        List<HttpResponse<String>> responses = send(11, "/orders/1", null);

        assertThat(responses.subList(0, 10)).allSatisfy(admitted -> {
            assertThat(admitted.statusCode()).isEqualTo(200);
            assertThat(admitted.body()).isEqualTo("backend:/orders/1");
            assertThat(admitted.headers().firstValue("RateLimit-Policy")).hasValue("\"orders\";q=10;w=1");
        });
        HttpResponse<String> refused = responses.get(10);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"violated-policies\":[\"orders\"]");
        String retryAfter = refused.headers().firstValue("Retry-After").orElseThrow();

        CLOCK.advance(Duration.ofSeconds(Long.parseLong(retryAfter)));

        assertThat(send(1, "/orders/1", null).get(0).statusCode()).isEqualTo(200);
    }

    @Test
    void aRouteNamingALimiterTakesItsTiersAndThePlanOfEachApiKey() {
        List<Integer> free = send(3, "/partner/orders", "free-1").stream().map(HttpResponse::statusCode).toList();
        List<HttpResponse<String>> gold = send(5, "/partner/orders", "gold-1");

        assertThat(free).containsExactly(200, 200, 429);
        assertThat(gold.stream().map(HttpResponse::statusCode)).containsExactly(200, 200, 200, 200, 429);
        assertThat(gold.get(0).headers().firstValue("RateLimit-Policy")).hasValue("\"partner\";q=4;w=60");
    }

    @Test
    void aRouteNamingSluiceRateLimiterWithoutOptionsFailsStartUpNamingIt() {
        assertThatThrownBy(() -> start(WithoutOptions.class).close()).rootCause()
                .isInstanceOfSatisfying(SluiceConfigurationException.class, failure -> {
                    assertThat(failure).hasMessage("Route 'bare' is limited by sluiceRateLimiter but has no"
                            + " sluice-rate-limiter options");
                    assertThat(failure.action()).contains("filters.requestRateLimiter()"
                            + ".rateLimiter(SluiceGatewayRateLimiter.class");
                });
    }

    @Test
    void aRouteNamingALimiterThatIsNotConfiguredFailsStartUpNamingIt() {
        assertThatThrownBy(() -> start(UnknownLimiter.class).close())
                .hasStackTraceContaining("route 'misnamed' sluice-rate-limiter names limiter 'nowhere', which"
                        + " sluice.limits does not configure");
    }
}
