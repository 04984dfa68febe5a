package dev.sluice.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.Reservation;
import dev.sluice.Sleeper;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.tck.ClockAdvancingSleeper;
import dev.sluice.tck.MutableClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** An application with a {@link MeterRegistry} limits as one without: metrics observe and change nothing. */
class MetricsKeepStoreCapabilitiesTest {

    private static final int CALLS = 30;

    private final MutableClock clock = new MutableClock(Instant.parse("2300-01-01T00:00:00Z"));

    private final ApplicationContextRunner bare = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceMetricsAutoConfiguration.class))
            .withBean(InstantSource.class, () -> clock)
            .withBean(Sleeper.class, () -> new ClockAdvancingSleeper(clock))
            .withBean(PartnerClient.class);

    private final ApplicationContextRunner withMetrics = bare.withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    /** Calls a partner's API, ten calls a second at most, waiting for its turn. */
    public static class PartnerClient {
        @RateLimited(limit = 10, window = "1s", algorithm = Algorithm.TOKEN_BUCKET, onLimit = OnLimit.WAIT,
                maxWait = "1m")
        public String call() {
            return "ok";
        }
    }

    @Test
    void aWaitingTokenBucketReservesItsPermitsWithMetricsAsWithout() {
        int bareCalls = storeCallsForAllCalls(bare);
        int callsWithMetrics = storeCallsForAllCalls(withMetrics);

        assertThat(bareCalls).as("store calls without metrics: one per permit").isEqualTo(CALLS);
        assertThat(callsWithMetrics).as("store calls with metrics").isEqualTo(bareCalls);
    }

    /** Store calls made while the client is called {@value #CALLS} times, starting with a full bucket. */
    private int storeCallsForAllCalls(ApplicationContextRunner runner) {
        Counting store = new Counting(InMemoryRateLimitStore.builder().clock(clock).build());
        AtomicInteger calls = new AtomicInteger();
        runner.withBean(RateLimitStore.class, () -> store).run(context -> {
            assertThat(context).hasNotFailed();
            PartnerClient client = context.getBean(PartnerClient.class);
            for (int i = 0; i < CALLS; i++) {
                assertThat(client.call()).isEqualTo("ok");
            }
            calls.set(store.calls.get());
        });
        return calls.get();
    }

    @Test
    void theInMemoryStoreDecidesDirectlyAndASampleOfItsDecisionsIsTimed() {
        withMetrics.run(context -> {
            PartnerClient client = context.getBean(PartnerClient.class);
            Instant start = clock.instant();
            for (int i = 0; i < 1000; i++) {
                client.call();
            }
            long timed = context.getBean(MeterRegistry.class).get("sluice.store.latency")
                    .tag("store", "InMemoryRateLimitStore").timer().count();

            assertThat(timed).as("decisions timed out of 1,000, one in %d expected", TimedRateLimitStore.IN_MEMORY_SAMPLE)
                    .isBetween(1L, 200L);
            assertThat(Duration.between(start, clock.instant())).as("waited for the 990 permits past the first 10")
                    .isEqualTo(Duration.ofMillis(99_000));
        });
    }

    /** The application's store: counts every call it is asked, reservations included. */
    static final class Counting extends ForwardingRateLimitStore {

        final AtomicInteger calls = new AtomicInteger();

        Counting(RateLimitStore store) {
            super(store);
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            calls.incrementAndGet();
            return super.tryAcquire(key, tiers, cost);
        }

        @Override
        public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
            calls.incrementAndGet();
            return super.reserve(key, tiers, cost, maxWait);
        }
    }
}
