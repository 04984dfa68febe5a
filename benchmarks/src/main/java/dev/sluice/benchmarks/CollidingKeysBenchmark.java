package dev.sluice.benchmarks;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import java.util.concurrent.ThreadLocalRandom;
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
 * One decision of an {@link InMemoryRateLimitStore} holding 100,000 keys that all share one
 * {@code String.hashCode} (every key a string of "Aa" and "BB" blocks), beside 100,000 ordinary
 * keys of the same length: what a caller who picks keys to collide can make each decision cost.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CollidingKeysBenchmark {

    /** How many keys the store holds. */
    static final int KEYS = 100_000;
    /** Blocks of two characters per key: 2^17 keys share one hash code. */
    private static final int BLOCKS = 17;

    /** {@code ordinary} keys, or keys that all share one {@code String.hashCode}. */
    @Param({"ordinary", "colliding"})
    public String keys;

    private String[] names = new String[0];
    private RateLimiter limiter;

    /** Makes the keys and gives each its state, so that the measurement sees keys the store holds. */
    @Setup
    public void setUp() {
        names = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            names[i] = keys.equals("colliding") ? colliding(i) : String.format("user-%0" + (2 * BLOCKS - 5) + "d", i);
        }
        limiter = RateLimiter.builder()
                .name("bench")
                .store(InMemoryRateLimitStore.builder().maximumKeys(SluiceDecisionBenchmark.MAXIMUM_KEYS).build())
                .tier(Tier.of(SluiceDecisionBenchmark.LIMIT, SluiceDecisionBenchmark.WINDOW, Algorithm.SLIDING_WINDOW))
                .build();
        for (String name : names) {
            limiter.tryAcquire(name);
        }
    }

    /** The key whose blocks spell {@code index} in binary, "Aa" for 0 and "BB" for 1. */
    private static String colliding(int index) {
        StringBuilder key = new StringBuilder(2 * BLOCKS);
        for (int block = 0; block < BLOCKS; block++) {
            key.append((index >> block & 1) == 0 ? "Aa" : "BB");
        }
        return key.toString();
    }

    /**
     * One decision, for a key drawn at random.
     *
     * @return the decision
     */
    @Benchmark
    public Decision tryAcquire() {
        return limiter.tryAcquire(names[ThreadLocalRandom.current().nextInt(KEYS)]);
    }
}
