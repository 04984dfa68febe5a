package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimitStore;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.redisson.api.RedissonClient;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A gateway route whose Redis store stops answering (its redis-server paused with SIGSTOP) answers
 * by {@code sluice.failure-policy}, as Sluice's own limits do: refused with 503 under fail-closed,
 * admitted under fail-open and local-fallback, each within the store's timeout rather than hanging.
 */
class GatewayStoreOutageTest {

    private static final RedisServer REDIS = RedisServer.start();
    private static final Backend BACKEND = Backend.start();

    /** A WebFlux gateway whose Redis store gives up on a decision after 300 ms. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Gateway {

        @Bean(destroyMethod = "shutdown")
        RedissonClient outageRedisson() {
            return RedisClients.connect(REDIS);
        }

        @Bean
        RateLimitStore outageStore(RedissonClient outageRedisson) {
            return RedissonRateLimitStore.builder(outageRedisson).timeout(Duration.ofMillis(300)).build();
        }
    }

    @AfterAll
    static void stop() {
        BACKEND.close();
        REDIS.close();
    }

    @ParameterizedTest
    @CsvSource({"fail-closed, 503", "fail-open, 200", "local-fallback, 200"})
    void whileRedisDoesNotAnswerTheRouteAnswersByTheFailurePolicy(String policy, int status) {
        String route = "spring.cloud.gateway.server.webflux.routes[0].";
        String args = route + "filters[0].args.";
        try (ConfigurableApplicationContext gateway = new SpringApplicationBuilder(Gateway.class)
                .web(WebApplicationType.REACTIVE).properties(
                        "server.port=0",
                        "sluice.failure-policy=" + policy,
                        route + "id=outage-" + policy,
                        route + "uri=" + BACKEND.uri(),
                        route + "predicates[0]=Path=/api/**",
                        route + "filters[0].name=RequestRateLimiter",
                        args + "rate-limiter=#{@sluiceRateLimiter}",
                        args + "sluice-rate-limiter.key=#request.headers.getFirst('X-Api-Key')",
                        args + "sluice-rate-limiter.tiers[0].limit=100",
                        args + "sluice-rate-limiter.tiers[0].window=1m")
                .run()) {
            GatewayClient client = new GatewayClient(
                    Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port")));
            assertThat(client.get("/api/x", "key-1").statusCode()).as("while Redis answers").isEqualTo(200);

            REDIS.suspend();
            HttpResponse<String> answer;
            try {
                answer = client.get("/api/x", "key-1");
            } finally {
                REDIS.resume();
            }

            assertThat(answer.statusCode()).isEqualTo(status);
        }
    }
}
