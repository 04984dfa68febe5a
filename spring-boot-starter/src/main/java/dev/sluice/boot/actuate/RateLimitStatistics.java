package dev.sluice.boot.actuate;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.StoreOverloadedException;
import dev.sluice.TopKeys;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Allowed and rejected calls per limiter since the application started, and, unless
 * {@code sluice.top-keys.enabled} is false, who each limiter is limiting: for the actuator endpoint.
 *
 * <p>Public for the core auto-configuration, in its own package, which makes it and has every
 * limiter report to it.
 */
public final class RateLimitStatistics implements RateLimitListener {

    /** One limiter's counts; {@code top} is null when top keys are off. */
    private record Counts(LongAdder allowed, LongAdder rejected, @Nullable TopKeys top) {
    }

    private final Map<String, Counts> counts = new ConcurrentHashMap<>();
    private final int topKeysCapacity;

    /**
     * Statistics.
     *
     * @param topKeysCapacity the counters of each top-keys list; 0 to keep none
     */
    public RateLimitStatistics(int topKeysCapacity) {
        this.topKeysCapacity = topKeysCapacity;
    }

    @Override
    public void onDecision(RateLimiter limiter, String key, Decision decision) {
        Counts limiterCounts = of(limiter);
        (decision.allowed() ? limiterCounts.allowed : limiterCounts.rejected).increment();
        if (limiterCounts.top != null) {
            limiterCounts.top.record(key, decision);
        }
    }

    /** A refusal the store made because it was overloaded: counted, but not held against the key. */
    @Override
    public void onStoreOverloaded(RateLimiter limiter, String key, Decision decision,
                                  StoreOverloadedException overload) {
        of(limiter).rejected.increment();
    }

    private Counts of(RateLimiter limiter) {
        Counts limiterCounts = counts.get(limiter.name());
        return limiterCounts != null ? limiterCounts : counts.computeIfAbsent(limiter.name(), name ->
                new Counts(new LongAdder(), new LongAdder(), topKeysCapacity > 0 ? new TopKeys(topKeysCapacity) : null));
    }

    long allowed(String limiterName) {
        Counts limiterCounts = counts.get(limiterName);
        return limiterCounts == null ? 0 : limiterCounts.allowed.sum();
    }

    long rejected(String limiterName) {
        Counts limiterCounts = counts.get(limiterName);
        return limiterCounts == null ? 0 : limiterCounts.rejected.sum();
    }

    boolean keepsTopKeys() {
        return topKeysCapacity > 0;
    }

    /**
     * Who the limiter is limiting.
     *
     * @param limiterName the limiter's name
     * @return its summary; empty when top keys are off, or it has decided no call yet
     */
    Optional<TopKeys> topKeys(String limiterName) {
        return Optional.ofNullable(counts.get(limiterName)).map(Counts::top);
    }
}
