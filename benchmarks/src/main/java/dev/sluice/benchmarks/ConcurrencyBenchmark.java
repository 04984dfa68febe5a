package dev.sluice.benchmarks;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.internal.SemaphoreBulkhead;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * A permit of a concurrency limit taken and given back, as a call that runs no time at all holds
 * it, with a limit no run reaches: Sluice's concurrency tier on the in-memory store beside
 * Resilience4j's {@code SemaphoreBulkhead}, kept per key as {@link PerKey} says.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ConcurrencyBenchmark {

    /** Calls at once: more than any run holds, so every call is admitted. */
    static final int CONCURRENCY = 1_000_000;

    private RateLimiter limiter;
    private PerKey<Bulkhead> bulkheads;
    /** When calls are taken to be admitted, as a caller records it once per call. */
    private Instant admittedAt;

    /**
     * Builds both, and takes and gives back a permit of every key.
     *
     * @param keys the keys of the calls
     */
    @Setup
    public void setUp(Keys keys) {
        limiter = RateLimiter.builder()
                .name("bench")
                .store(InMemoryRateLimitStore.builder().maximumKeys(SluiceDecisionBenchmark.MAXIMUM_KEYS).build())
                .tier(Tier.concurrency(CONCURRENCY, Duration.ofSeconds(30)))
                .build();
        BulkheadConfig config = BulkheadConfig.custom().maxConcurrentCalls(CONCURRENCY).maxWaitDuration(Duration.ZERO)
                .build();
        bulkheads = new PerKey<>(keys.names(), key -> new SemaphoreBulkhead(key, config));
        admittedAt = Instant.now();
        for (String key : keys.names()) {
            limiter.tryAcquire(key);
            limiter.release(key, 1, null, admittedAt);
            bulkheads.get(key).tryAcquirePermission();
            bulkheads.get(key).onComplete();
        }
    }

    /**
     * Sluice: {@code tryAcquire}, then {@code release}.
     *
     * @param cursor the key of the call
     * @return whether the call was admitted
     */
    @Benchmark
    public boolean sluice(Keys.Cursor cursor) {
        String key = cursor.next();
        if (!limiter.tryAcquire(key).allowed()) {
            return false;
        }
        limiter.release(key, 1, null, admittedAt);
        return true;
    }

    /**
     * Resilience4j: {@code tryAcquirePermission}, then {@code onComplete}.
     *
     * @param cursor the key of the call
     * @return whether the call was admitted
     */
    @Benchmark
    public boolean resilience4j(Keys.Cursor cursor) {
        Bulkhead bulkhead = bulkheads.get(cursor.next());
        if (!bulkhead.tryAcquirePermission()) {
            return false;
        }
        bulkhead.onComplete();
        return true;
    }
}
