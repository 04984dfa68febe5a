package dev.sluice.benchmarks;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * {@link RateLimiter#tryAcquire(String)} on an {@link InMemoryRateLimitStore}, per algorithm, with
 * a limit no call reaches: the cost of an admitted decision.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SluiceDecisionBenchmark {

    /** Permits per window: more than any run can take, so every call is admitted. */
    static final long LIMIT = 1_000_000_000L;
    /** The window of every limit in the JMH benchmarks. */
    static final Duration WINDOW = Duration.ofSeconds(1);
    /** The store's bound on keys, above the largest key count, as its documentation advises. */
    static final long MAXIMUM_KEYS = 200_000;

    /** How the limiter counts. */
    @Param
    public Algorithm algorithm;

    private RateLimiter limiter;

    /**
     * Builds the limiter and gives every key its state, so that the measurement sees keys the
     * store already holds.
     *
     * @param keys the keys of the calls
     */
    @Setup
    public void setUp(Keys keys) {
        limiter = RateLimiter.builder()
                .name("bench")
                .store(InMemoryRateLimitStore.builder().maximumKeys(MAXIMUM_KEYS).build())
                .tier(Tier.of(LIMIT, WINDOW, algorithm))
                .build();
        for (String key : keys.names()) {
            limiter.tryAcquire(key);
        }
    }

    /**
     * One decision.
     *
     * @param cursor the key of the call
     * @return the decision
     */
    @Benchmark
    public Decision tryAcquire(Keys.Cursor cursor) {
        return limiter.tryAcquire(cursor.next());
    }
}
