package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.Sleeper;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

/**
 * Two instances of an application sharing a real redis-server, each calling the same partner
 * through a client rule: when the partner tells one of them to come back later, neither sends
 * it anything until then, not even the callers of the other that hold permits reserved before.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisClientRulesTest {

    private static ConfigurableApplicationContext start(RedisServer redis, PartnerStub partner, String onLimit) {
        return start(ClientApp.class, redis, partner, "sluice.client.rules[0].tiers[0].limit=5",
                "sluice.client.rules[0].on-limit=" + onLimit);
    }

    private static ConfigurableApplicationContext start(Class<?> app, RedisServer redis, PartnerStub partner,
                                                        String... properties) {
        return new SpringApplicationBuilder(app)
                .web(WebApplicationType.NONE)
                .properties("sluice.store=redis",
                        "sluice.redis.address=" + redis.address(),
                        "sluice.client.rules[0].name=partner",
                        "sluice.client.rules[0].host=127.0.0.1:" + partner.port(),
                        "sluice.client.rules[0].tiers[0].window=1s",
                        "sluice.client.rules[0].max-wait=10s")
                .properties(properties)
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

    @Test
    void callersOfAnotherInstanceHoldingPermitsATokenBucketReservedWaitThroughAPause() throws Exception {
        String[] oneASecond = {"sluice.client.rules[0].tiers[0].limit=1",
                "sluice.client.rules[0].tiers[0].algorithm=token-bucket", "sluice.client.rules[0].on-limit=wait"};
        ExecutorService callers = Executors.newFixedThreadPool(4);
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        try (RedisServer redis = RedisServer.start();
             PartnerStub partner = PartnerStub.start(InstantSource.system());
             ConfigurableApplicationContext told = start(ClientApp.class, redis, partner, oneASecond);
             ConfigurableApplicationContext reserving = start(CountedSleepsApp.class, redis, partner, oneASecond)) {
            // The told instance's call takes the bucket's one permit; the partner holds it until the other instance's
            // three callers have reserved theirs, due 1, 2 and 3 s later, then answers it with a pause of 4 s.
            partner.answerNext(429, Map.of("Retry-After", "4"));
            partner.beforeCounting(before -> {
                if (before == 0) {
                    arrived.countDown();
                    try {
                        answer.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            Future<?> refused = callers.submit(() -> call(told, partner));
            assertThat(arrived.await(30, TimeUnit.SECONDS)).as("the told instance's call reached the partner").isTrue();
            CountedSleeps sleeps = reserving.getBean(CountedSleeps.class);
            List<Future<?>> reserved = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                reserved.add(callers.submit(() -> call(reserving, partner)));
            }
            sleeps.awaitSleeping(3);
            answer.countDown();
            assertThatThrownBy(() -> refused.get(30, TimeUnit.SECONDS)).hasMessageContaining("429");
            for (Future<?> call : reserved) {
                call.get(30, TimeUnit.SECONDS);
            }

            List<Instant> arrivals = partner.arrivals();
            assertThat(arrivals).as("the 429, then the three reserved calls").hasSize(4);
            Instant paused = arrivals.get(0);
            System.out.printf("Reserved calls of the other instance reached the partner %s ms after its 429%n",
                    arrivals.subList(1, 4).stream().map(arrival -> Duration.between(paused, arrival).toMillis()).toList());
            assertThat(arrivals.subList(1, 4)).as("the reserved calls, after the 429 at " + paused)
                    .allSatisfy(arrival -> assertThat(arrival).isAfterOrEqualTo(paused.plusSeconds(4)));
        } finally {
            answer.countDown();
            callers.shutdownNow();
        }
    }

    /** The application, with a sleeper that counts the callers asleep. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class CountedSleepsApp {

        @Bean
        CountedSleeps sleeper() {
            return new CountedSleeps();
        }
    }

    /** Sleeps as the system does, counting the callers asleep. */
    static final class CountedSleeps implements Sleeper {

        private int asleep;

        @Override
        public void sleep(Duration duration) throws InterruptedException {
            synchronized (this) {
                asleep++;
                notifyAll();
            }
            try {
                Sleeper.system().sleep(duration);
            } finally {
                synchronized (this) {
                    asleep--;
                }
            }
        }

        synchronized void awaitSleeping(int callers) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (asleep < callers) {
                assertThat(System.nanoTime()).as("callers asleep after 30 s").isLessThan(deadline);
                wait(100);
            }
        }
    }

    /** The application: Spring Boot's RestClient and Sluice. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ClientApp {
    }
}
