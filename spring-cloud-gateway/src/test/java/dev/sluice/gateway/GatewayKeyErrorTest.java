package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.gateway.docs.ApiKeys;
import dev.sluice.gateway.docs.Plans;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * A WebFlux gateway route limited by {@code sluiceRateLimiter} whose {@code KeyResolver} (the
 * documentation's {@code apiKeyResolver}) gives no key for a request without {@code X-Api-Key}:
 * the request reaches Sluice and follows {@code sluice.key-error}, where the gateway's own filter
 * would answer 403 without a body. A route that sets the gateway's answers to such requests
 * ({@code deny-empty-key}) fails start-up naming itself.
 */
class GatewayKeyErrorTest {

    private static final Backend BACKEND = Backend.start();

    /** A WebFlux gateway with the documentation's key resolver and plans, counting in memory. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
        @Import({ApiKeys.class, Plans.class})
    static class Gateway {
    }

    @AfterAll
    static void stop() {
        BACKEND.close();
    }

    private static ConfigurableApplicationContext start(String... properties) {
        String route = "spring.cloud.gateway.server.webflux.routes[0].";
        String args = route + "filters[0].args.";
        return new SpringApplicationBuilder(Gateway.class).web(WebApplicationType.REACTIVE)
                .properties("server.port=0",
                        "sluice.limits.partner.tiers[0].limit=2", "sluice.limits.partner.tiers[0].window=1m",
                        route + "id=partner-api",
                        route + "uri=" + BACKEND.uri(),
                        route + "predicates[0]=Path=/partner/**",
                        route + "filters[0].name=RequestRateLimiter",
                        args + "rate-limiter=#{@sluiceRateLimiter}",
                        args + "key-resolver=#{@apiKeyResolver}",
                        args + "sluice-rate-limiter.limiter=partner",
                        args + "sluice-rate-limiter.plan=@plans.of(#request.headers.getFirst('X-Api-Key'))")
                .properties(properties)
                .run();
    }

    private static List<HttpResponse<String>> send(ConfigurableApplicationContext gateway, int times, String apiKey) {
        GatewayClient client = new GatewayClient(Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port")));
        return IntStream.range(0, times).mapToObj(i -> client.get("/partner/orders", apiKey)).toList();
    }

    @Test
    void underRejectARequestWithoutAKeyGetsThe400Problem() {
        try (ConfigurableApplicationContext gateway = start()) {
            HttpResponse<String> answer = send(gateway, 1, null).get(0);

            assertThat(answer.statusCode()).isEqualTo(400);
            assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(answer.body()).contains("\"detail\":\"This request lacks what its rate limit is counted by.\"");
        }
    }

    @Test
    void underSharedKeyRequestsWithoutAKeyAreCountedTogether() {
        try (ConfigurableApplicationContext gateway = start("sluice.key-error=shared-key")) {
            List<Integer> withoutKey = send(gateway, 3, null).stream().map(HttpResponse::statusCode).toList();
            List<Integer> withKey = send(gateway, 2, "free-1").stream().map(HttpResponse::statusCode).toList();

            assertThat(withoutKey).containsExactly(200, 200, 429);
            assertThat(withKey).containsExactly(200, 200);
        }
    }

    @Test
    void underSkipRequestsWithoutAKeyGoThroughUncounted() {
        try (ConfigurableApplicationContext gateway = start("sluice.key-error=skip")) {
            List<HttpResponse<String>> withoutKey = send(gateway, 3, null);
            List<Integer> withKey = send(gateway, 3, "free-1").stream().map(HttpResponse::statusCode).toList();

            assertThat(withoutKey).allSatisfy(admitted -> {
                assertThat(admitted.statusCode()).isEqualTo(200);
                assertThat(admitted.body()).isEqualTo("backend:/partner/orders");
                assertThat(admitted.headers().firstValue("RateLimit-Policy")).isEmpty();
            });
            assertThat(withKey).containsExactly(200, 200, 429);
        }
    }

    @Test
    void aRouteThatSetsTheGatewaysAnswerToRequestsWithoutAKeyFailsStartUpNamingIt() {
        String args = "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.";

        assertThatThrownBy(() -> start(args + "deny-empty-key=false").close())
                .hasStackTraceContaining("Route 'partner-api' is limited by sluiceRateLimiter and sets the"
                        + " RequestRateLimiter filter's deny-empty-key");
    }
}
