package dev.sluice;

import dev.sluice.annotation.Algorithm;
import java.time.Duration;
import java.util.Objects;

/**
 * One limit: at most {@code limit} permits per {@code window}, counted with {@code algorithm}.
 *
 * <pre class="code">
 * Tier perMinute = Tier.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW)
 *         .withBlockFor(Duration.ofMinutes(15));
 * </pre>
 *
 * <p>Tiers are immutable. Windows are whole milliseconds, at least one. So that every store
 * can keep its arithmetic exact (Redis scripts compute in doubles), {@code limit} times the
 * window in milliseconds may not exceed 2<sup>52</sup>, which allows, for instance, fifty million
 * permits a day, and a block lasts at most 2<sup>52</sup> milliseconds.
 *
 * <p>A {@linkplain #concurrency concurrency tier} ({@link Algorithm#CONCURRENCY}) is not a rate:
 * at most {@code limit} permits held at once, each from a call's admission until the call ends;
 * its window is the lease a shared store keeps a held permit for while its holder stops
 * renewing it. It neither counts rejected calls nor blocks.
 *
 * @param limit         permits per window; for {@link Algorithm#TOKEN_BUCKET} the capacity
 * @param window        the window; for {@link Algorithm#TOKEN_BUCKET} the time to refill an
 *                      empty bucket
 * @param algorithm     how calls are counted
 * @param countRejected whether calls rejected by any tier still count against this one
 * @param blockFor      how long a key stays rejected after this tier rejects it; zero for
 *                      no block
 * @see dev.sluice.annotation.RateLimited
 */
public record Tier(long limit, Duration window, Algorithm algorithm, boolean countRejected, Duration blockFor) {

    /**
     * The lease of a concurrency tier that gives none: 30 seconds. A holder renews its leases a
     * third of the way through, so a crashed holder's permits come free within this time.
     */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    /** The shortest lease of a concurrency tier: one second. */
    public static final Duration MIN_LEASE = Duration.ofSeconds(1);

    /** The largest {@code limit × window in ms} a tier may have: 2<sup>52</sup>. */
    public static final long MAX_LIMIT_TIMES_WINDOW_MILLIS = 1L << 52;

    /**
     * Checks the figures.
     *
     * @throws IllegalArgumentException when a figure is out of range
     */
    public Tier {
        Objects.requireNonNull(window, "window");
        Objects.requireNonNull(algorithm, "algorithm");
        Objects.requireNonNull(blockFor, "blockFor");
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
        if (window.compareTo(Duration.ofMillis(1)) < 0 || window.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException("window must be whole milliseconds, at least 1ms, was " + window);
        }
        if (window.compareTo(Duration.ofMillis(MAX_LIMIT_TIMES_WINDOW_MILLIS)) > 0
                || limit > MAX_LIMIT_TIMES_WINDOW_MILLIS / window.toMillis()) {
            throw new IllegalArgumentException("limit × window is too large: " + limit + " per " + window
                    + " exceeds 2^52 permit-milliseconds; use a shorter window with a proportionally smaller limit");
        }
        if (algorithm == Algorithm.CONCURRENCY && (countRejected || !blockFor.isZero())) {
            throw new IllegalArgumentException("a concurrency tier neither counts rejected calls nor blocks: a rejected"
                    + " call holds no permit");
        }
        if (algorithm == Algorithm.CONCURRENCY && window.compareTo(MIN_LEASE) < 0) {
            throw new IllegalArgumentException("a concurrency tier's lease must be at least " + MIN_LEASE + ", was "
                    + window + ": a shorter one could run out between two renewals of a running call");
        }
        if (blockFor.isNegative() || blockFor.getNano() % 1_000_000 != 0
                || blockFor.compareTo(Duration.ofMillis(MAX_LIMIT_TIMES_WINDOW_MILLIS)) > 0) {
            throw new IllegalArgumentException("blockFor must be whole milliseconds, from zero to 2^52 ms, was "
                    + blockFor);
        }
    }

    /**
     * A tier that neither counts rejected calls nor blocks.
     *
     * @param limit     permits per window, positive
     * @param window    the window, whole milliseconds
     * @param algorithm how calls are counted
     * @return the tier
     */
    public static Tier of(long limit, Duration window, Algorithm algorithm) {
        return new Tier(limit, window, algorithm, false, Duration.ZERO);
    }

    /**
     * A concurrency tier: at most {@code permits} calls of a key running at once.
     *
     * @param permits the permits that may be held at once, positive
     * @param lease   how long a shared store keeps a permit whose holder stopped renewing it
     *                (it died, or stopped answering): whole milliseconds, at least a second. Holders renew their
     *                leases while their calls run, so the lease bounds how long a crashed
     *                holder's permits stay taken, never how long a call may run.
     * @return the tier
     */
    public static Tier concurrency(long permits, Duration lease) {
        return new Tier(permits, lease, Algorithm.CONCURRENCY, false, Duration.ZERO);
    }

    /**
     * Whether this is a concurrency tier, whose permits are held while a call runs and then
     * {@linkplain RateLimitStore#giveBack given back}.
     *
     * @return whether the algorithm is {@link Algorithm#CONCURRENCY}
     */
    public boolean isConcurrency() {
        return algorithm == Algorithm.CONCURRENCY;
    }

    /**
     * This tier, also counting calls that are rejected.
     *
     * @return a copy with {@code countRejected} set
     */
    public Tier withCountRejected() {
        return new Tier(limit, window, algorithm, true, blockFor);
    }

    /**
     * This tier, blocking a key it rejects for {@code duration}.
     *
     * @param duration how long the key stays rejected; zero for no block
     * @return a copy with {@code blockFor} set
     */
    public Tier withBlockFor(Duration duration) {
        return new Tier(limit, window, algorithm, countRejected, duration);
    }

    /**
     * The window in milliseconds.
     *
     * @return {@code window().toMillis()}
     */
    public long windowMillis() {
        return window.toMillis();
    }

    /**
     * Whether this tier counts in the same state as {@code other}: same algorithm and window.
     * Stores keep one state per algorithm and window, so a changed limit keeps its counts. All
     * concurrency tiers of a key share one state, whatever their leases: the permits held.
     *
     * @param other another tier
     * @return whether both use the same counters
     */
    public boolean sharesStateWith(Tier other) {
        return algorithm == other.algorithm && (window.equals(other.window) || algorithm == Algorithm.CONCURRENCY);
    }

    @Override
    public String toString() {
        if (isConcurrency()) {
            return limit + " at once (" + algorithm + ", lease " + window + ")";
        }
        return limit + " per " + window + " (" + algorithm
                + (countRejected ? ", counting rejected calls" : "")
                + (blockFor.isZero() ? "" : ", blocking for " + blockFor) + ")";
    }
}
