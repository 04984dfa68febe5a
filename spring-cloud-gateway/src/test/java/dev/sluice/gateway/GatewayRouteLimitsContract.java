package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.tck.MutableClock;
import dev.sluice.test.AutoConfigureSluiceTest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What a gateway limited by Sluice does, on either gateway: each stack's test starts a gateway
 * whose routes lead to {@link Backend}, with the same limits, and these cases hold on both.
 *
 * <ul>
 * <li>{@code /limited/**}: tiers of the route's own, 3 a minute, keyed by {@code X-Api-Key};</li>
 * <li>{@code /named/**}: the limiter {@code partner} of {@code sluice.limits} (2 a minute, 4 on
 * plan {@code pro}), keyed by {@code X-Api-Key}, the plan chosen by the key's prefix;</li>
 * <li>{@code /ruled/**}: no gateway limit, but {@code sluice.http.rules} rule {@code ruled}, 2 a
 * minute per key.</li>
 * </ul>
 */
@AutoConfigureSluiceTest
abstract class GatewayRouteLimitsContract {

    /** Started before each test class and stopped after it: each gateway its own. */
    private static Backend backend;

    @LocalServerPort
    int port;

    @Autowired
    MutableClock clock;

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add("backend.uri", () -> backend.uri());
        registry.add("sluice.limits.partner.tiers[0].limit", () -> "2");
        registry.add("sluice.limits.partner.tiers[0].window", () -> "1m");
        registry.add("sluice.limits.partner.plans.pro.tiers[0].limit", () -> "4");
        registry.add("sluice.limits.partner.plans.pro.tiers[0].window", () -> "1m");
        registry.add("sluice.http.rules[0].name", () -> "ruled");
        registry.add("sluice.http.rules[0].path", () -> "/ruled/**");
        registry.add("sluice.http.rules[0].tiers[0].limit", () -> "2");
        registry.add("sluice.http.rules[0].tiers[0].window", () -> "1m");
    }

    @BeforeAll
    static void startBackend() {
        backend = Backend.start();
    }

    @AfterAll
    static void stopBackend() {
        backend.close();
    }

    private List<HttpResponse<String>> send(int times, String path, String apiKey) {
        GatewayClient client = new GatewayClient(port);
        return IntStream.range(0, times).mapToObj(i -> client.get(path, apiKey)).toList();
    }

    @Test
    void theFourthRequestOfAMinuteIsRefusedWithRetryAfterAndTheRateLimitFields() {
        List<HttpResponse<String>> responses = send(4, "/limited/items", "alice");

        assertThat(responses.subList(0, 3)).allSatisfy(admitted -> {
            assertThat(admitted.statusCode()).isEqualTo(200);
            assertThat(admitted.body()).isEqualTo("backend:/limited/items");
            assertThat(admitted.headers().firstValue("RateLimit-Policy")).hasValue("\"limited\";q=3;w=60");
        });
        assertThat(responses.get(2).headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        HttpResponse<String> refused = responses.get(3);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).doesNotContain("backend");
        long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
        // A sliding window weighs the previous minute too: a wait of up to two.
        assertThat(retryAfter).isBetween(1L, 120L);
        assertThat(refused.headers().allValues("Retry-After")).hasSize(1);
        assertThat(refused.headers().firstValue("RateLimit-Policy")).hasValue("\"limited\";q=3;w=60");
        assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"limited\";r=0;t=" + retryAfter);
        assertThat(refused.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
        assertThat(refused.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
    }

    @Test
    void anotherClientIsNotLimitedByTheFirstOnesRequests() {
        send(4, "/limited/items", "alice");

        HttpResponse<String> other = new GatewayClient(port).get("/limited/items", "bob");

        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(other.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
    }

    @Test
    void aRefusedClientIsAdmittedOnceTheWindowHasPassed() {
        assertThat(send(4, "/limited/items", "carol").get(3).statusCode()).isEqualTo(429);

        clock.advance(Duration.ofMinutes(2));

        assertThat(new GatewayClient(port).get("/limited/items", "carol").statusCode()).isEqualTo(200);
    }

    @Test
    void aRouteNamingALimiterTakesItsTiersAndThePlanOfEachRequest() {
        List<Integer> free = send(3, "/named/orders", "free-dave").stream().map(HttpResponse::statusCode).toList();
        List<HttpResponse<String>> pro = send(5, "/named/orders", "pro-erin");

        assertThat(free).containsExactly(200, 200, 429);
        assertThat(pro.stream().map(HttpResponse::statusCode)).containsExactly(200, 200, 200, 200, 429);
        assertThat(pro.get(0).headers().firstValue("RateLimit-Policy")).hasValue("\"partner\";q=4;w=60");
        assertThat(pro.get(4).headers().firstValue("Retry-After")).isPresent();
    }

    @Test
    void httpRulesLimitRequestsToGatewayRoutes() {
        List<HttpResponse<String>> responses = send(3, "/ruled/things", "frank");

        assertThat(responses.stream().map(HttpResponse::statusCode)).containsExactly(200, 200, 429);
        assertThat(responses.get(0).body()).isEqualTo("backend:/ruled/things");
        assertThat(responses.get(0).headers().firstValue("RateLimit-Policy")).hasValue("\"ruled\";q=2;w=60");
        assertThat(responses.get(2).headers().firstValue("Retry-After")).isPresent();
        HttpResponse<String> other = new GatewayClient(port).get("/ruled/things", "grace");
        assertThat(other.statusCode()).as(other.headers() + other.body()).isEqualTo(200);
    }
}
