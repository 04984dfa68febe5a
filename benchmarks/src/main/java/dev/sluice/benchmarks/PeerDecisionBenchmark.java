package dev.sluice.benchmarks;

import static dev.sluice.benchmarks.SluiceDecisionBenchmark.LIMIT;
import static dev.sluice.benchmarks.SluiceDecisionBenchmark.WINDOW;

import io.github.bucket4j.Bandwidth;
import com.google.common.util.concurrent.RateLimiter;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The decisions of other rate limiters, with the limit of {@link SluiceDecisionBenchmark}, kept
 * per key as {@link PerKey} says: what Sluice's decisions are compared with.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PeerDecisionBenchmark {

    private PerKey<AtomicRateLimiter> resilience4j;
    private PerKey<Bucket> bucket4j;
    private PerKey<RateLimiter> guava;

    /**
     * Makes every key's limiters and takes a permit from each.
     *
     * @param keys the keys of the calls
     */
    @Setup
    public void setUp(Keys keys) {
        RateLimiterConfig resilience4jConfig = resilience4jConfig();
        resilience4j = new PerKey<>(keys.names(), key -> new AtomicRateLimiter(key, resilience4jConfig));
        Bandwidth bandwidth = Bandwidth.builder().capacity(LIMIT).refillGreedy(LIMIT, WINDOW).build();
        bucket4j = new PerKey<>(keys.names(), key -> Bucket.builder().addLimit(bandwidth).build());
        guava = new PerKey<>(keys.names(),
                key -> RateLimiter.create(LIMIT / (double) WINDOW.toSeconds()));
        for (String key : keys.names()) {
            resilience4j.get(key).acquirePermission();
            bucket4j.get(key).tryConsume(1);
            guava.get(key).tryAcquire();
        }
    }

    /**
     * The limit as Resilience4j writes it: {@code LIMIT} permits per {@code WINDOW}, no waiting.
     *
     * @return the configuration
     */
    static RateLimiterConfig resilience4jConfig() {
        return RateLimiterConfig.custom()
                .limitForPeriod(Math.toIntExact(LIMIT))
                .limitRefreshPeriod(WINDOW)
                .timeoutDuration(Duration.ZERO)
                .build();
    }

    /**
     * Resilience4j's {@code AtomicRateLimiter}: a permit or a refusal, without waiting.
     *
     * @param cursor the key of the call
     * @return whether the call was admitted
     */
    @Benchmark
    public boolean resilience4j(Keys.Cursor cursor) {
        return resilience4j.get(cursor.next()).acquirePermission();
    }

    /**
     * A local Bucket4j bucket (lock-free, the default), refilled greedily.
     *
     * @param cursor the key of the call
     * @return whether the call was admitted
     */
    @Benchmark
    public boolean bucket4j(Keys.Cursor cursor) {
        return bucket4j.get(cursor.next()).tryConsume(1);
    }

    /**
     * Guava's {@code RateLimiter}, which smooths calls out at a steady rate rather than
     * counting per window; {@code tryAcquire()} never waits.
     *
     * @param cursor the key of the call
     * @return whether the call was admitted
     */
    @Benchmark
    public boolean guava(Keys.Cursor cursor) {
        return guava.get(cursor.next()).tryAcquire();
    }
}
