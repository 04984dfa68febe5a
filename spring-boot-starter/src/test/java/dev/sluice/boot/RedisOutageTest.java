package dev.sluice.boot;

import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.app.LimitedApp;
import dev.sluice.redisson.testing.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

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

    private static RestTestClient http(ConfigurableApplicationContext app) {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        return RestTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
    }

    private static EntityExchangeResult<String> sendOtp(RestTestClient http, String phone) {
        return http.post().uri("/otp").header("X-Forwarded-For", "203.0.113.7").contentType(MediaType.APPLICATION_JSON)
                .body("{\"phone\":\"" + phone + "\"}").exchange().returnResult(String.class);
    }

    private static EntityExchangeResult<String> get(RestTestClient http, String path) {
        return http.get().uri(path).exchange().returnResult(String.class);
    }

    @Test
    void startsWhileRedisIsDownFollowsItsFailurePolicyAndUsesRedisOnceItAnswers() {
        try (RedisServer redis = RedisServer.start()) {
            redis.kill();
            long starting = System.nanoTime();
            try (ConfigurableApplicationContext app = start(redis, "fail-open")) {
                System.out.printf("FAULT started with Redis down in %d ms%n",
                        Duration.ofNanos(System.nanoTime() - starting).toMillis());
                RestTestClient http = http(app);

                // 3 codes a minute from one address, but nothing can count them: every call is admitted.
                for (int i = 0; i < 20; i++) {
                    long calling = System.nanoTime();
                    assertThat(sendOtp(http, "+1555070" + i).getStatus().value()).isEqualTo(202);
                    assertThat(Duration.ofNanos(System.nanoTime() - calling)).isLessThan(ofSeconds(1));
                }

                EntityExchangeResult<String> health = get(http, "/actuator/health");
                assertThat(health.getStatus().value()).as("a store down does not take the instance down").isEqualTo(200);
                assertThat(health.getResponseBody()).endsWith("\"status\":\"UP\"}")
                        .contains("\"sluice\":{\"details\":{\"store\":\"RedissonRateLimitStore\",\"defaultFailurePolicy\":\"FAIL_OPEN\",")
                        .contains("\"circuitBreaker\":\"OPEN\"")
                        .contains("\"status\":\"CIRCUIT_OPEN\"");
                assertThat(app.getBean(MeterRegistry.class).get("sluice.store.state").tag("state", "open").gauge()
                        .value()).isEqualTo(1);
                assertThat(get(http, "/actuator/ratelimits").getResponseBody())
                        .contains("\"store\":\"RedissonRateLimitStore\",\"storeState\":\"OPEN\",\"storeQueue\":")
                        .contains(",\"failurePolicy\":\"FAIL_OPEN\"");

                redis.restart();
                long restarted = System.nanoTime();
                await("a decision by Redis", () -> {
                    sendOtp(http, "+15550799");
                    return redis.cli("EXISTS", "sluice:{otp-phone:+15550799}:sl3600000").equals("1");
                });
                System.out.printf("FAULT first decision by Redis %d ms after it was started again%n",
                        Duration.ofNanos(System.nanoTime() - restarted).toMillis());
                assertThat(get(http, "/actuator/health").getResponseBody())
                        .contains("\"sluice\":{\"details\":{\"store\":\"RedissonRateLimitStore\",\"defaultFailurePolicy\":\"FAIL_OPEN\",")
                        .contains("\"circuitBreaker\":\"CLOSED\"},\"status\":\"UP\"}");
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
