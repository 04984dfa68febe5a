package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps a failing store from costing every call its timeout. When {@code failureThreshold} of
 * the last 20 calls have failed, the breaker <em>opens</em>: for {@code openDuration} no call is
 * sent to the store, and each fails at once with {@link StoreUnavailableException}, so its
 * limiter applies its {@link FailurePolicy} without waiting. Then one call probes the store
 * (<em>half-open</em>): if it answers, the breaker closes and calls go to the store again; if
 * not, the breaker stays open for another {@code openDuration}. It counts a share of recent
 * calls rather than failures in a row, so that a few failures among many answers do not open
 * it. It guards the whole store: when most calls fail, even if only because one master of a
 * cluster is failing over, calls for keys that other masters still serve take their failure
 * policy too, until the probe gets an answer.
 *
 * <p>A store guards each call with it:
 *
 * <pre class="code">
 * if (!breaker.tryAcquirePermission()) {
 *     throw breaker.rejection();
 * }
 * // ask the store, then report the outcome: breaker.onSuccess() or breaker.onFailure(failure)
 * </pre>
 *
 * <p>It logs one WARNING when it opens, naming the failure, and one INFO once the store has
 * answered again for 10 seconds, however many calls fail, and however often the breaker opens and
 * closes, in between. Thread-safe; one breaker per store.
 */
public final class StoreCircuitBreaker {

    /** Where a breaker stands. */
    public enum State {
        /** The store answers; every call is sent to it. */
        CLOSED,
        /** The store failed repeatedly; no call is sent to it until the open duration is over. */
        OPEN,
        /** One call is probing the store; the others fail at once until it answers. */
        HALF_OPEN
    }

    /** How many of the latest calls the failure threshold counts in. */
    static final int RECENT_CALLS = 20;

    private static final System.Logger LOGGER = System.getLogger(StoreCircuitBreaker.class.getName());
    private static final int RECENT_MASK = (1 << RECENT_CALLS) - 1;
    private static final long HEALTHY_MILLIS = 10_000;
    private static final long NEVER = Long.MIN_VALUE;

    private final String name;
    private final int failureThreshold;
    private final long openMillis;
    private final InstantSource clock;
    /** The outcomes of the latest calls, one bit each, set for a failure. */
    private final AtomicInteger recent = new AtomicInteger();
    private final LongAdder notSent = new LongAdder();
    private volatile State state = State.CLOSED;
    private volatile long openUntil;
    /** When the breaker last closed during an outage not yet reported over, or {@link #NEVER}. */
    private volatile long closedAt = NEVER;
    private volatile String lastFailure = "";
    // Guarded by this.
    private long outageStart = NEVER;
    private long probeSentAt;

    private StoreCircuitBreaker(Builder builder) {
        this.name = builder.name;
        this.failureThreshold = builder.failureThreshold;
        this.openMillis = builder.openDuration.toMillis();
        this.clock = builder.clock;
    }

    /**
     * Starts a breaker definition.
     *
     * @return a builder: opens when 16 of the last 20 calls failed, for 1 second, on the system
     *         clock
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Whether a call may be sent to the store now. A caller that gets {@code true} reports the
     * call's outcome with {@link #onSuccess()} or {@link #onFailure(RuntimeException)}.
     *
     * @return {@code true} when closed, or for the one probe when the open duration is over
     */
    public boolean tryAcquirePermission() {
        if (state == State.CLOSED) {
            return true;
        }
        if (state == State.OPEN && clock.millis() < openUntil) {
            notSent.increment();
            return false;
        }
        synchronized (this) {
            long now = clock.millis();
            switch (state) {
                case CLOSED -> {
                    return true;
                }
                case OPEN -> {
                    if (now >= openUntil) {
                        state = State.HALF_OPEN;
                        probeSentAt = now;
                        return true;
                    }
                }
                case HALF_OPEN -> {
                    // A probe that never reported (its store broke its own deadline) must not keep the breaker shut.
                    if (now - probeSentAt >= openMillis) {
                        probeSentAt = now;
                        return true;
                    }
                }
            }
            notSent.increment();
            return false;
        }
    }

    /**
     * The store answered a call: a half-open breaker closes. An open one stays open, whichever
     * calls sent before it opened still answer: only the probe decides.
     */
    public void onSuccess() {
        // A store that keeps answering writes nothing here.
        if (recent.get() != 0) {
            recent.updateAndGet(outcomes -> (outcomes << 1) & RECENT_MASK);
        }
        if (state == State.HALF_OPEN) {
            close();
        }
        long closed = closedAt;
        if (closed != NEVER && clock.millis() - closed >= HEALTHY_MILLIS) {
            reportRecovery();
        }
    }

    /**
     * The store failed a call (an error or a timeout, not a rejected request). The breaker opens
     * at the threshold, or again when the probe failed.
     *
     * @param failure what the store failed with
     */
    public void onFailure(RuntimeException failure) {
        State current = state;
        if (current == State.HALF_OPEN || current == State.CLOSED && Integer.bitCount(recent.updateAndGet(
                outcomes -> (outcomes << 1 | 1) & RECENT_MASK)) >= failureThreshold) {
            open(failure);
        }
    }

    private void open(RuntimeException failure) {
        String failed = StoreUnavailableException.describe(failure);
        boolean outageStarts;
        synchronized (this) {
            if (state == State.OPEN) {
                return;
            }
            long now = clock.millis();
            lastFailure = failed;
            outageStarts = outageStart == NEVER;
            if (outageStarts) {
                outageStart = now;
            }
            closedAt = NEVER;
            openUntil = now + openMillis;
            state = State.OPEN;
        }
        if (outageStarts) {
            LOGGER.log(System.Logger.Level.WARNING, () -> "Rate limit store" + named() + " failed " + failureThreshold
                    + " of its last " + RECENT_CALLS + " calls, the last with: " + LogText.escape(failed) + ". Its limiters follow"
                    + " their failure policy without asking it; it is asked again in " + openMillis + " ms, and every "
                    + openMillis + " ms until it answers.");
        }
    }

    private synchronized void close() {
        if (state != State.CLOSED) {
            recent.set(0);
            closedAt = clock.millis();
            state = State.CLOSED;
        }
    }

    /** Ends the outage once the store has answered for a while, so that a flapping store logs no more lines. */
    private void reportRecovery() {
        long failing;
        synchronized (this) {
            if (closedAt == NEVER || clock.millis() - closedAt < HEALTHY_MILLIS) {
                return;
            }
            failing = closedAt - outageStart;
            closedAt = NEVER;
            outageStart = NEVER;
        }
        long spared = notSent.sumThenReset();
        LOGGER.log(System.Logger.Level.INFO, () -> "Rate limit store" + named() + " answers again, after "
                + Duration.ofMillis(failing).toString().substring(2).toLowerCase(Locale.ROOT) + " of failing; "
                + spared + " calls did not wait for it meanwhile.");
    }

    private String named() {
        return name.isEmpty() ? "" : " " + name;
    }

    /**
     * Where the breaker stands now.
     *
     * @return the state
     */
    public State state() {
        return state;
    }

    /**
     * The exception for a call the breaker did not let through.
     *
     * @return an exception saying why, and when the store is asked again
     */
    public StoreUnavailableException rejection() {
        return new StoreUnavailableException("Rate limit store" + named() + " is not asked while it fails (last: "
                + lastFailure + ")", retryAfter());
    }

    /**
     * How long until the store is asked again: the rest of the open duration, or, while a
     * probe is out, the open duration. Zero when closed.
     *
     * @return the wait
     */
    public Duration retryAfter() {
        return switch (state) {
            case CLOSED -> Duration.ZERO;
            case OPEN -> Duration.ofMillis(Math.max(0, openUntil - clock.millis()));
            case HALF_OPEN -> Duration.ofMillis(openMillis);
        };
    }

    @Override
    public String toString() {
        return "StoreCircuitBreaker" + named() + " " + state;
    }

    /** Configures a {@link StoreCircuitBreaker}. Not thread-safe; build once per store. */
    public static final class Builder {

        private String name = "";
        private int failureThreshold = 16;
        private Duration openDuration = Duration.ofSeconds(1);
        private InstantSource clock = InstantSource.system();

        private Builder() {
        }

        /**
         * What log lines and messages call the store.
         *
         * @param name such as {@code "RedissonRateLimitStore"}; default none
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * How many of the last 20 calls must have failed to open the breaker.
         *
         * @param failureThreshold from 1 to 20; default 16
         * @return this builder
         */
        public Builder failureThreshold(int failureThreshold) {
            if (failureThreshold < 1 || failureThreshold > RECENT_CALLS) {
                throw new IllegalArgumentException("failureThreshold must be from 1 to " + RECENT_CALLS + ", was "
                        + failureThreshold);
            }
            this.failureThreshold = failureThreshold;
            return this;
        }

        /**
         * How long an open breaker sends no call to the store before one probes it.
         *
         * @param openDuration at least 1 ms; default 1 second
         * @return this builder
         */
        public Builder openDuration(Duration openDuration) {
            Objects.requireNonNull(openDuration, "openDuration");
            if (openDuration.toMillis() < 1) {
                throw new IllegalArgumentException("openDuration must be at least 1 ms, was " + openDuration);
            }
            this.openDuration = openDuration;
            return this;
        }

        /**
         * The clock timing the open duration.
         *
         * @param clock default the system clock
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Builds the breaker, closed.
         *
         * @return the breaker
         */
        public StoreCircuitBreaker build() {
            return new StoreCircuitBreaker(this);
        }
    }
}
