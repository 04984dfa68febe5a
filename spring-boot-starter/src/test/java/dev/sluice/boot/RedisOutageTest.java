package dev.sluice.boot;

import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.boot.app.LimitedApp;
import dev.sluice.redisson.testing.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * An application on the client Sluice makes for itself, with Redis down when it starts: it
 * starts, its limiters follow their failure policy, health, metrics and the actuator say so, and
 * decisions go to Redis again once it answers.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisOutageTest {

    private static ConfigurableApplicationContext start(RedisServer redis, String failurePolicy) {
        return new SpringApplicationBuilder(LimitedApp.class).run(
                "--server.port=0",
                "--sluice.store=redis",
                "--sluice.redis.address=" + redis.address(),
                "--sluice.failure-policy=" + failurePolicy,
                "--sluice.web.trusted-proxies=127.0.0.1",
                "--management.endpoints.web.exposure.include=health,ratelimits",
                "--management.endpoint.health.show-details=always");
    }

    private static WebTestClient http(ConfigurableApplicationContext app) {
        int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
        return LocalServer.client(port);
    }

    private static EntityExchangeResult<String> sendOtp(WebTestClient http, String phone) {
        return http.post().uri("/otp").header("X-Forwarded-For", "203.0.113.7").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"phone\":\"" + phone + "\"}").exchange().expectBody(String.class).returnResult();
    }

    private static EntityExchangeResult<String> get(WebTestClient http, String path) {
        return http.get().uri(path).exchange().expectBody(String.class).returnResult();
    }

    @Test
    void startsWhileRedisIsDownFollowsItsFailurePolicyAndUsesRedisOnceItAnswers() {
        try (RedisServer redis = RedisServer.start()) {
            redis.kill();
            long starting = System.nanoTime();
            try (ConfigurableApplicationContext app = start(redis, "fail-open")) {
                System.out.printf("FAULT started with Redis down in %d ms%n",
                        Duration.ofNanos(System.nanoTime() - starting).toMillis());
                WebTestClient http = http(app);
                // The application's first request also starts its web stack: not the store's cost.
                get(http, "/actuator/health");

                // 3 codes a minute from one address, but nothing can count them: every call is admitted. A call
                // waiting for Redis to connect would take seconds; the store's timeout and probe cost 300 ms at most.
                for (int i = 0; i < 20; i++) {
                    long calling = System.nanoTime();
                    assertThat(sendOtp(http, "+1555070" + i).getStatus().value()).isEqualTo(202);
                    assertThat(Duration.ofNanos(System.nanoTime() - calling)).isLessThan(ofSeconds(2));
                }

                EntityExchangeResult<String> health = get(http, "/actuator/health");
                assertThat(health.getStatus().value()).as("a store down does not take the instance down").isEqualTo(200);
                JsonNode healthBody = ReactiveHttpLimitsContract.json(health.getResponseBody());
                assertThat(healthBody.path("status").asText()).isEqualTo("UP");
                assertThat(healthBody.at("/components/sluice/status").asText()).isEqualTo("CIRCUIT_OPEN");
                assertThat(healthBody.at("/components/sluice/details/store").asText()).isEqualTo("RedissonRateLimitStore");
                assertThat(healthBody.at("/components/sluice/details/defaultFailurePolicy").asText()).isEqualTo("FAIL_OPEN");
                assertThat(healthBody.at("/components/sluice/details/circuitBreaker").asText()).isEqualTo("OPEN");
                assertThat(app.getBean(MeterRegistry.class).get("sluice.store.state").tag("state", "open").gauge()
                        .value()).isEqualTo(1);
                assertThat(get(http, "/actuator/ratelimits").getResponseBody())
                        .contains("\"store\":\"RedissonRateLimitStore\"").contains("\"storeState\":\"OPEN\"")
                        .contains("\"storeQueue\":").contains("\"failurePolicy\":\"FAIL_OPEN\"");

                redis.restart();
                long restarted = System.nanoTime();
                await("a decision by Redis", () -> {
                    sendOtp(http, "+15550799");
                    return redis.cli("EXISTS", "sluice:{otp-phone:+15550799}:sl3600000").equals("1");
                });
                System.out.printf("FAULT first decision by Redis %d ms after it was started again%n",
                        Duration.ofNanos(System.nanoTime() - restarted).toMillis());
                JsonNode recovered = ReactiveHttpLimitsContract.json(get(http, "/actuator/health").getResponseBody());
                assertThat(recovered.at("/components/sluice/status").asText()).isEqualTo("UP");
                assertThat(recovered.at("/components/sluice/details/circuitBreaker").asText()).isEqualTo("CLOSED");
            }
        }
    }

    @Test
    void failClosedAnswersWithA503AndAShortRetryAfter() {
        try (RedisServer redis = RedisServer.start()) {
            redis.kill();
            try (ConfigurableApplicationContext app = start(redis, "fail-closed")) {
                EntityExchangeResult<String> refused = sendOtp(http(app), "+15550800");

                assertThat(refused.getStatus().value()).isEqualTo(503);
                assertThat(refused.getResponseHeaders().getFirst("Content-Type")).isEqualTo("application/problem+json");
                assertThat(Long.parseLong(refused.getResponseHeaders().getFirst("Retry-After"))).isBetween(1L, 5L);
                assertThat(refused.getResponseBody()).contains("\"status\":503", "\"title\":\"Service Unavailable\"",
                        "\"detail\":\"The rate limit of this request cannot be checked right now; try again shortly.\"")
                        .doesNotContain("+1555").doesNotContain("203.0.113.7");
            }
        }
    }

    /** Polls for up to 20 seconds. */
    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
            RedisServer.waitBriefly();
        }
    }
}
