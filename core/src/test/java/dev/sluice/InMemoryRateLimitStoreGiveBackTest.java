package dev.sluice;

import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.annotation.Algorithm;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Giving back in the in-memory store beyond the contract: its bounds, the state it keeps, its lock. */
class InMemoryRateLimitStoreGiveBackTest {

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();

    /** The call, then {@code newer} calls a millisecond later: the call is given back if it is among the 1,024 newest. */
    @ParameterizedTest
    @ValueSource(ints = {1_023, 1_024})
    void aSlidingLogLooksForTheCallAmongItsNewest1024Calls(int newer) {
        List<Tier> log = List.of(Tier.of(2_000, ofMinutes(1), SLIDING_LOG));
        assertThat(store.tryAcquire("k", log, 2).allowed()).isTrue();
        millis.incrementAndGet();
        for (int i = 0; i < newer; i++) {
            assertThat(store.tryAcquire("k", log, 1).allowed()).isTrue();
        }

        store.giveBack("k", log, 2, ofMillis(1));
        long left = store.tryAcquire("k", log, 1).remaining();
        assertThat(left).isEqualTo(newer < 1_024 ? 2_000 - newer - 1 : 2_000 - newer - 2 - 1);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, mode = EnumSource.Mode.EXCLUDE, names = "CONCURRENCY")
    void aGiveBackForAKeyWithoutStateMakesNone(Algorithm algorithm) {
        store.giveBack("k", List.of(Tier.of(5, ofMinutes(1), algorithm)), 2, Duration.ZERO);
        assertThat(store.estimatedKeyCount()).isZero();
    }

    @Test
    void aGiveBackFindsAKeyDecidedThroughALimiterUnderItsQualifiedName() {
        Tier tier = Tier.of(2, ofMinutes(1), SLIDING_LOG);
        RateLimiter limiter = RateLimiter.builder().name("otp").store(store).clock(clock).tier(tier).build();
        assertThat(limiter.tryAcquire("alice", 2).allowed()).isTrue();

        store.giveBack("otp:alice", List.of(tier), 2, Duration.ZERO);
        assertThat(limiter.tryAcquire("alice", 2).allowed()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, mode = EnumSource.Mode.EXCLUDE, names = "CONCURRENCY")
    void giveBacksRacingDecisionsOnOneKeyLoseNothing(Algorithm algorithm) throws Exception {
        List<Tier> tiers = List.of(Tier.of(1_000, ofMinutes(1), algorithm));
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CyclicBarrier go = new CyclicBarrier(threads);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 2_000; i++) {
                        if (store.tryAcquire("k", tiers, 1).allowed()) {
                            store.giveBack("k", tiers, 1, Duration.ZERO);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> each : done) {
                each.get(1, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(store.tryAcquire("k", tiers, 1_000).allowed()).as("every call was given back").isTrue();
    }
}
