package dev.sluice.boot;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Allowed and rejected calls per limiter since the application started, for the actuator endpoint. */
final class RateLimitStatistics implements RateLimitListener {

    /** One limiter's counts. */
    record Counts(LongAdder allowed, LongAdder rejected) {
    }

    private final Map<String, Counts> counts = new ConcurrentHashMap<>();

    @Override
    public void onDecision(RateLimiter limiter, String key, Decision decision) {
        Counts limiterCounts = counts.computeIfAbsent(limiter.name(), name -> new Counts(new LongAdder(), new LongAdder()));
        (decision.allowed() ? limiterCounts.allowed : limiterCounts.rejected).increment();
    }

    long allowed(String limiterName) {
        Counts limiterCounts = counts.get(limiterName);
        return limiterCounts == null ? 0 : limiterCounts.allowed.sum();
    }

    long rejected(String limiterName) {
        Counts limiterCounts = counts.get(limiterName);
        return limiterCounts == null ? 0 : limiterCounts.rejected.sum();
    }
}
