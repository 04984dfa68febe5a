package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;

/**
 * Two instances of an application sharing a real redis-server, each calling the same partner
 * through a client rule: when the partner tells one of them to come back later, neither sends
 * it anything until then.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisClientRulesTest {

    private static ConfigurableApplicationContext start(RedisServer redis, PartnerStub partner, String onLimit) {
        return new SpringApplicationBuilder(ClientApp.class)
                .web(WebApplicationType.NONE)
                .properties("sluice.store=redis",
                        "sluice.redis.address=" + redis.address(),
                        "sluice.client.rules[0].name=partner",
                        "sluice.client.rules[0].host=127.0.0.1:" + partner.port(),
                        "sluice.client.rules[0].tiers[0].limit=5",
                        "sluice.client.rules[0].tiers[0].window=1s",
                        "sluice.client.rules[0].on-limit=" + onLimit,
                        "sluice.client.rules[0].max-wait=10s")
                .run("--spring.config.name=redis-client-rules");
    }

    private static void call(ConfigurableApplicationContext app, PartnerStub partner) {
        app.getBean(RestClient.Builder.class).baseUrl(partner.url()).build()
                .get().uri("/quotes/ACME").retrieve().toBodilessEntity();
    }

    @Test
    void aPauseOneInstanceHearsOfStopsEveryInstanceSharingTheStore() {
        try (RedisServer redis = RedisServer.start();
             PartnerStub partner = PartnerStub.start(InstantSource.system());
             ConfigurableApplicationContext told = start(redis, partner, "wait");
             ConfigurableApplicationContext refusing = start(redis, partner, "reject");
             ConfigurableApplicationContext waiting = start(redis, partner, "wait")) {
            partner.answerNext(429, Map.of("Retry-After", "3"));
            assertThatThrownBy(() -> call(told, partner)).hasMessageContaining("429");

            assertThatThrownBy(() -> call(refusing, partner))
                    .isInstanceOfSatisfying(RateLimitExceededException.class, rejected -> assertThat(
                            rejected.retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(3)));
            call(waiting, partner);

            List<Instant> arrivals = partner.arrivals();
            assertThat(arrivals).as("the 429, then the waiting instance's call").hasSize(2);
            assertThat(Duration.between(arrivals.get(0), arrivals.get(1))).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        }
    }

    /** The application: Spring Boot's RestClient and Sluice. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ClientApp {
    }
}
