package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one limiter logs while its store fails: a WARNING for the first failure, then at most one
 * line per {@link #INTERVAL} counting the calls its failure policy answered. Never a stack trace,
 * never a key: an outage can fail thousands of calls a second; the store's message, which may
 * quote request data, is escaped onto the one line.
 */
final class StoreFailureLog {

    static final Duration INTERVAL = Duration.ofSeconds(10);

    private static final System.Logger LOGGER = System.getLogger(RateLimiter.class.getName());
    private static final long NEVER = Long.MIN_VALUE;

    private final String limiterName;
    private final FailurePolicy policy;
    private final InstantSource clock;
    private final LongAdder failures = new LongAdder();
    private final AtomicLong lastLine = new AtomicLong(NEVER);

    StoreFailureLog(String limiterName, FailurePolicy policy, InstantSource clock) {
        this.limiterName = limiterName;
        this.policy = policy;
        this.clock = clock;
    }

    /** Counts a call the failure policy answered, and logs if a line is due, naming no key. */
    void record(RuntimeException failure, String storeKey) {
        failures.increment();
        long now = clock.millis();
        long last = lastLine.get();
        if (last != NEVER && now - last < INTERVAL.toMillis() || !lastLine.compareAndSet(last, now)) {
            return;
        }
        long calls = failures.sumThenReset();
        LOGGER.log(System.Logger.Level.WARNING, () -> "Rate limiter '" + limiterName + "': its store could not decide "
                + calls + (calls == 1 ? " call" : " calls")
                + (last == NEVER ? "" : " in the last " + Duration.ofMillis(now - last).toSeconds() + " s")
                + ", " + consequence() + " (" + policy + "); the last failure: "
                + LogText.escape(StoreUnavailableException.describe(failure, storeKey)));
    }

    private String consequence() {
        return switch (policy) {
            case FAIL_OPEN -> "admitted unchecked";
            case FAIL_CLOSED -> "refused with StoreUnavailableException";
            case LOCAL_FALLBACK -> "decided in this JVM instead";
        };
    }
}
