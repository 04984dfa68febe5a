package dev.sluice.annotation;

/**
 * How a tier counts calls against its limit.
 *
 * <p>Every store implements every algorithm with the same meaning, checked by the store
 * contract suite. Windows are aligned to the epoch: a window of {@code 1m} runs from one
 * whole minute (UTC) to the next.
 *
 * @see RateLimited#algorithm()
 */
public enum Algorithm {

    /**
     * A counter per window, reset at each window boundary. Cheapest, and exact within a
     * window, but a caller can spend a whole limit at the end of one window and again at the
     * start of the next: up to twice the limit within one window's length.
     */
    FIXED_WINDOW,

    /**
     * The sliding window counter: the current window's count plus the previous window's
     * count weighted by how much of it still overlaps the sliding window. A call fits when
     * {@code ceil(previous * (1 - elapsed / window) + current) + cost <= limit}. Constant
     * memory per key; approximate by design, because it assumes the previous window's calls
     * were spread evenly. It never admits more than twice the limit within any window's
     * length, and when the previous window is empty it is exact. The default.
     */
    SLIDING_WINDOW,

    /**
     * The sliding window log: a timestamp per admitted permit, counted over the last window.
     * Exact: within any window's length no more than the limit is admitted. An entry exactly
     * one window old no longer counts. Memory grows with the limit.
     */
    SLIDING_LOG,

    /**
     * A token bucket holding at most {@code limit} tokens, refilled evenly at
     * {@code limit / window}; a new bucket starts full. A call fits when at least its cost
     * in tokens is present. Allows bursts up to the capacity while holding the long-run rate.
     */
    TOKEN_BUCKET,

    /**
     * Not a rate: at most {@code limit} permits held at once. A call takes its permits when it
     * is admitted and holds them until it ends, whatever its outcome; there is no window. In a
     * store shared by several processes, a held permit carries a lease (the tier's window) that
     * its holder renews while it runs, so that a holder that dies or stops answering loses its
     * permits when the lease runs out. Declared with {@link RateLimited#concurrency()} rather
     * than as an algorithm.
     */
    CONCURRENCY
}
