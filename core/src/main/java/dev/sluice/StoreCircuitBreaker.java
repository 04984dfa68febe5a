package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Keeps a failing store from costing every call its timeout. When {@code failureThreshold} of
 * the last 20 calls have failed, the breaker <em>opens</em>: for {@code openDuration} no call is
 * sent to the store, and each fails at once with {@link StoreUnavailableException}, so its
 * limiter applies its {@link FailurePolicy} without waiting. Then one call probes the store
 * (<em>half-open</em>): if it answers, the breaker closes and calls go to the store again; if
 * not, the breaker stays open for another {@code openDuration}. Only the probe decides: the
 * outcomes of other calls, such as those sent before the breaker opened that fail or answer
 * late, neither close nor reopen it, and those sent before it last closed do not count towards
 * opening it again. It counts a share of recent
 * calls rather than failures in a row, so that a few failures among many answers do not open
 * it. It guards the whole store: when most calls fail, even if only because one master of a
 * cluster is failing over, calls for keys that other masters still serve take their failure
 * policy too, until the probe gets an answer.
 *
 * <p>A store guards each call with it:
 *
 * <pre class="code">
 * StoreCircuitBreaker.Permit permit = breaker.tryAcquirePermit();
 * if (permit == null) {
 *     throw breaker.rejection();
 * }
 * // ask the store, then report the outcome: permit.onSuccess() or permit.onFailure(failure)
 * </pre>
 *
 * <p>A store must not send a probe while calls sent before the breaker opened may still fail:
 * its {@code openDuration} is at least the store's timeout. The Redis stores refuse a breaker
 * with a shorter one, and give their default breaker the longer of half a second and their timeout.
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

    /**
     * How long a breaker stays open unless told otherwise: half a second, so that calls go to
     * the store again at most that long after it answers (in a cluster, after the client has
     * learnt of a replica that took over from a failed master).
     */
    public static final Duration DEFAULT_OPEN_DURATION = Duration.ofMillis(500);

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
    private final StoreFailureFilter failures;
    /**
     * Counts the breaker's changes of state and probes: a permit of an earlier generation is of a
     * call whose outcome no longer says anything. Written under this.
     */
    private volatile long generation;
    /** The permit of every call sent while closed, or {@code null} when not closed. */
    private volatile @Nullable Permit closedPermit = new Permit(this, 0, false);
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

    /**
     * A call the breaker let through, on which its outcome is reported, once. Calls sent while the
     * breaker is closed share one permit; the probe has one of its own. The outcome of a call
     * whose permit is from before the breaker's latest change (it opened, sent a probe or closed
     * since) is not taken into account.
     */
    public static final class Permit {

        private final StoreCircuitBreaker breaker;
        private final long generation;
        private final boolean probe;

        private Permit(StoreCircuitBreaker breaker, long generation, boolean probe) {
            this.breaker = breaker;
            this.generation = generation;
            this.probe = probe;
        }

        /** The store answered the call: the probe closes a half-open breaker. */
        public void onSuccess() {
            breaker.onSuccess(this);
        }

        /**
         * The store failed the call: when the failure is an {@linkplain #isOutage outage} (an
         * error or a timeout, not a rejected request), the breaker opens at the threshold, or
         * again when the probe failed. Any other failure is taken as an answer of the store,
         * unless it is ignored: then it counts for nothing, and a probe's place goes to the next call.
         *
         * @param failure what the store failed with
         */
        public void onFailure(Throwable failure) {
            if (breaker.failures.isOutage(failure)) {
                breaker.onFailure(this, failure);
            } else if (!breaker.failures.ignores(failure)) {
                breaker.onSuccess(this);
            } else if (probe) {
                breaker.releaseProbe(this);
            }
        }

        /**
         * Whether this is the permit of the probe, whose outcome alone decides a half-open
         * breaker.
         *
         * @return {@code true} for the probe
         */
        public boolean isProbe() {
            return probe;
        }
    }

    private StoreCircuitBreaker(Builder builder) {
        this.name = builder.name;
        this.failureThreshold = builder.failureThreshold;
        this.openMillis = builder.openDuration.toMillis();
        this.clock = builder.clock;
        this.failures = builder.failures;
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
     * Lets a call be sent to the store, or not. A caller given a permit reports the call's
     * outcome on it.
     *
     * @return a permit when closed, or the probe's when the open duration is over; {@code null}
     *         when the call must not be sent
     */
    public @Nullable Permit tryAcquirePermit() {
        Permit closed = closedPermit;
        if (closed != null) {
            return closed;
        }
        if (state == State.OPEN && clock.millis() < openUntil) {
            notSent.increment();
            return null;
        }
        synchronized (this) {
            long now = clock.millis();
            switch (state) {
                case CLOSED -> {
                    return closedPermit;
                }
                case OPEN -> {
                    if (now >= openUntil) {
                        state = State.HALF_OPEN;
                        return probe(now);
                    }
                }
                case HALF_OPEN -> {
                    // A probe that never reported (its store broke its own deadline) must not keep the breaker shut.
                    if (now - probeSentAt >= openMillis) {
                        return probe(now);
                    }
                }
            }
            notSent.increment();
            return null;
        }
    }

    /** A new probe, whose generation outdates every earlier permit, the previous probe's included. */
    private Permit probe(long now) {
        probeSentAt = now;
        generation++;
        return new Permit(this, generation, true);
    }

    private void onSuccess(Permit permit) {
        if (permit.generation != generation) {
            return;
        }
        if (permit.probe) {
            close(permit);
            return;
        }
        // A store that keeps answering writes nothing here.
        if (recent.get() != 0) {
            recent.updateAndGet(outcomes -> (outcomes << 1) & RECENT_MASK);
        }
        long closed = closedAt;
        if (closed != NEVER && clock.millis() - closed >= HEALTHY_MILLIS) {
            reportRecovery();
        }
    }

    /** A probe that says nothing about the store: the next call probes instead. */
    private synchronized void releaseProbe(Permit probe) {
        if (probe.generation == generation) {
            probeSentAt = clock.millis() - openMillis;
        }
    }

    private void onFailure(Permit permit, Throwable failure) {
        if (permit.generation != generation) {
            return;
        }
        if (permit.probe || Integer.bitCount(recent.updateAndGet(outcomes -> (outcomes << 1 | 1) & RECENT_MASK))
                >= failureThreshold) {
            open(permit, failure);
        }
    }

    private void open(Permit permit, Throwable failure) {
        String failed = StoreUnavailableException.describe(failure);
        boolean outageStarts;
        synchronized (this) {
            if (permit.generation != generation) {
                return;
            }
            generation++;
            closedPermit = null;
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

    private synchronized void close(Permit probe) {
        if (probe.generation == generation) {
            recent.set(0);
            closedAt = clock.millis();
            generation++;
            closedPermit = new Permit(this, generation, false);
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
     * Whether an exception of the store counts as an outage: one it records and does not ignore,
     * as its builder's {@code recordExceptions}, {@code recordException}, {@code ignoreExceptions}
     * and {@code ignoreException} say. A limiter on the store takes its failure policy for
     * outages, and lets other exceptions through to its caller, unless it is told otherwise.
     *
     * @param failure what the store threw
     * @return {@code true} for an outage
     */
    public boolean isOutage(Throwable failure) {
        return failures.isOutage(failure);
    }

    /**
     * How long an open breaker sends no call to the store before one probes it.
     *
     * @return the open duration
     */
    public Duration openDuration() {
        return Duration.ofMillis(openMillis);
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
        private Duration openDuration = DEFAULT_OPEN_DURATION;
        private InstantSource clock = InstantSource.system();
        private StoreFailureFilter failures = StoreFailureFilter.DEFAULT;

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
         * How long an open breaker sends no call to the store before one probes it. A store
         * refuses a breaker whose open duration is shorter than its timeout: a probe would then
         * go out while calls sent before the breaker opened can still fail.
         *
         * @param openDuration at least 1 ms, and at least the timeout of the store it guards;
         *                     default 1 second
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
         * The exceptions of the store that are outages, and count as failures: an exception
         * that is, or inherits from, one of them, unless it is ignored. The others are taken as
         * answers of the store. As Resilience4j's {@code CircuitBreakerConfig.Builder}. A
         * {@link StoreOverloadedException} is never an outage, even when recorded: it counts for
         * nothing.
         *
         * @param classes the exceptions that are outages; default every {@link Exception}
         * @return this builder
         */
        @SafeVarargs
        public final Builder recordExceptions(Class<? extends Throwable>... classes) {
            this.failures = failures.recordExceptions(classes);
            return this;
        }

        /**
         * Which exceptions of the store are outages, besides {@link #recordExceptions} (either
         * one is enough), unless they are ignored.
         *
         * @param predicate true for an outage
         * @return this builder
         */
        public Builder recordException(Predicate<Throwable> predicate) {
            this.failures = failures.recordException(predicate);
            return this;
        }

        /**
         * The exceptions of the store that are neither outages nor answers, even when recorded:
         * they count for nothing, and a limiter lets them through to its caller.
         *
         * @param classes the exceptions, with those inheriting from them; default the programming
         *                errors {@link NullPointerException}, {@link IllegalArgumentException},
         *                {@link IllegalStateException}, {@link UnsupportedOperationException} and
         *                {@link ClassCastException}, which the classes given replace
         * @return this builder
         */
        @SafeVarargs
        public final Builder ignoreExceptions(Class<? extends Throwable>... classes) {
            this.failures = failures.ignoreExceptions(classes);
            return this;
        }

        /**
         * Which exceptions of the store are ignored, besides {@link #ignoreExceptions} (either one
         * is enough). A {@link StoreUnavailableException} is never ignored.
         *
         * @param predicate true for an exception to ignore
         * @return this builder
         */
        public Builder ignoreException(Predicate<Throwable> predicate) {
            this.failures = failures.ignoreException(predicate);
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
