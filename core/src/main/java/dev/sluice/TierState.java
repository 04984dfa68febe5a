package dev.sluice;

import dev.sluice.annotation.Algorithm;

/**
 * The in-memory counters of one tier of one key, in epoch milliseconds. Every method takes
 * the tier's current limit, because the limit travels with each call while the state is kept
 * per algorithm and window. All arithmetic is in whole numbers, so results are exact.
 *
 * <p>Callers first {@link #advance} the state to {@code now}; the other methods then read or
 * change it at that instant. Instances are guarded by their {@link KeyState}.
 */
abstract sealed class TierState {

    final Algorithm algorithm;
    final long window;
    /** When this state is back to full, as of the last decision that involved it. */
    long fullAt;

    private TierState(Algorithm algorithm, long window) {
        this.algorithm = algorithm;
        this.window = window;
    }

    static TierState create(Tier tier, long now) {
        long window = tier.windowMillis();
        return switch (tier.algorithm()) {
            case FIXED_WINDOW -> new FixedWindow(window);
            case SLIDING_WINDOW -> new SlidingWindow(window);
            case SLIDING_LOG -> new SlidingLog(window);
            case TOKEN_BUCKET -> new TokenBucket(window, now);
        };
    }

    boolean counts(Tier tier) {
        return algorithm == tier.algorithm() && window == tier.windowMillis();
    }

    /** Moves the state forward to {@code now}: rolls windows, drops old entries, refills. */
    abstract void advance(long now, long limit);

    /** Permits the tier admits now; negative when rejected calls were counted past the limit. */
    abstract long available(long now, long limit);

    /** Counts {@code cost} permits taken now. */
    abstract void take(long now, long limit, long cost);

    /** Milliseconds until a call of {@code cost} fits; zero when it fits now. */
    abstract long waitMillis(long now, long limit, long cost);

    /** Milliseconds until the tier is back to its full limit; zero when it is. */
    abstract long resetMillis(long now, long limit);

    /** {@code ceil(dividend / divisor)} for a positive divisor ({@code Math.ceilDiv} is Java 18). */
    static long ceilDiv(long dividend, long divisor) {
        return -Math.floorDiv(-dividend, divisor);
    }

    static long windowStart(long now, long window) {
        return now - Math.floorMod(now, window);
    }

    /** {@code FIXED_WINDOW}: one counter per epoch-aligned window. */
    static final class FixedWindow extends TierState {
        private long start = Long.MIN_VALUE;
        private long count;

        FixedWindow(long window) {
            super(Algorithm.FIXED_WINDOW, window);
        }

        @Override
        void advance(long now, long limit) {
            long current = windowStart(now, window);
            if (current != start) {
                start = current;
                count = 0;
            }
        }

        @Override
        long available(long now, long limit) {
            return limit - count;
        }

        @Override
        void take(long now, long limit, long cost) {
            // Counted rejections past the limit change no decision beyond one more window's worth.
            count = Math.min(2 * limit, count + cost);
        }

        @Override
        long waitMillis(long now, long limit, long cost) {
            return count + cost <= limit ? 0 : start + window - now;
        }

        @Override
        long resetMillis(long now, long limit) {
            return count == 0 ? 0 : start + window - now;
        }
    }

    /**
     * {@code SLIDING_WINDOW}: the current window's count plus the previous window's, weighted by
     * the share of it the sliding window still covers, rounded up.
     */
    static final class SlidingWindow extends TierState {
        private long start = Long.MIN_VALUE;
        private long current;
        private long previous;

        SlidingWindow(long window) {
            super(Algorithm.SLIDING_WINDOW, window);
        }

        @Override
        void advance(long now, long limit) {
            long aligned = windowStart(now, window);
            if (aligned == start) {
                return;
            }
            previous = aligned - window == start ? current : 0;
            current = 0;
            start = aligned;
        }

        private long weighted(long now) {
            long left = window - (now - start);
            return ceilDiv(previous * left, window) + current;
        }

        @Override
        long available(long now, long limit) {
            return limit - weighted(now);
        }

        @Override
        void take(long now, long limit, long cost) {
            // Counted rejections may run up to one more window's worth, as a token bucket's debt.
            current = Math.min(2 * limit, current + cost);
        }

        @Override
        long waitMillis(long now, long limit, long cost) {
            if (weighted(now) + cost <= limit) {
                return 0;
            }
            long elapsed = now - start;
            long roomNow = limit - current - cost;
            if (roomNow >= 0) {
                // Within this window: wait until previous * (window - elapsed) / window <= roomNow.
                return window - Math.floorDiv(roomNow * window, previous) - elapsed;
            }
            // Next window: this window's count becomes the previous one and decays from there.
            long roomNext = limit - cost;
            long elapsedNext = current == 0 ? 0 : window - Math.floorDiv(roomNext * window, current);
            return window - elapsed + elapsedNext;
        }

        @Override
        long resetMillis(long now, long limit) {
            long left = window - (now - start);
            return current > 0 ? left + window : previous > 0 ? left : 0;
        }
    }

    /**
     * {@code SLIDING_LOG}: the permits taken in the last window, as one entry per millisecond in
     * which calls took some (its time and how many), oldest first, and their total. A call of any
     * cost adds at most one entry. At most {@code limit} permits are kept: when rejected calls are
     * counted, the newest permits decide every figure, so the oldest go.
     */
    static final class SlidingLog extends TierState {
        private long[] times = new long[4];
        private long[] permits = new long[4];
        private int head;
        private int size;
        private long total;

        SlidingLog(long window) {
            super(Algorithm.SLIDING_LOG, window);
        }

        private int slot(int index) {
            return (head + index) % times.length;
        }

        @Override
        void advance(long now, long limit) {
            // An entry exactly one window old no longer counts.
            while (size > 0 && times[head] <= now - window) {
                total -= permits[head];
                dropOldest();
            }
        }

        private void dropOldest() {
            head = (head + 1) % times.length;
            size--;
        }

        @Override
        long available(long now, long limit) {
            return limit - total;
        }

        @Override
        void take(long now, long limit, long cost) {
            int newest = slot(size - 1);
            if (size > 0 && times[newest] == now) {
                permits[newest] += cost;
            } else {
                if (size == times.length) {
                    grow();
                }
                times[slot(size)] = now;
                permits[slot(size)] = cost;
                size++;
            }
            total += cost;
            while (total > limit) {
                long excess = total - limit;
                if (permits[head] > excess) {
                    permits[head] -= excess;
                    total = limit;
                } else {
                    total -= permits[head];
                    dropOldest();
                }
            }
        }

        private void grow() {
            long[] grownTimes = new long[2 * times.length];
            long[] grownPermits = new long[2 * times.length];
            for (int i = 0; i < size; i++) {
                grownTimes[i] = times[slot(i)];
                grownPermits[i] = permits[slot(i)];
            }
            times = grownTimes;
            permits = grownPermits;
            head = 0;
        }

        @Override
        long waitMillis(long now, long limit, long cost) {
            long excess = total + cost - limit;
            if (excess <= 0) {
                return 0;
            }
            // The call fits once the oldest permits, up to the excess, have left the window.
            long leaving = 0;
            for (int i = 0; ; i++) {
                leaving += permits[slot(i)];
                if (leaving >= excess) {
                    return times[slot(i)] + window - now;
                }
            }
        }

        @Override
        long resetMillis(long now, long limit) {
            return size == 0 ? 0 : times[slot(size - 1)] + window - now;
        }
    }

    /**
     * {@code TOKEN_BUCKET}, kept as the tokens missing from a full bucket, counted in units of
     * 1/window: a bucket refills by exactly {@code limit} units a millisecond and holds
     * {@code limit × window} units. A fresh key is a full bucket, and a changed limit keeps the
     * tokens taken, as the counters of the other algorithms keep their counts. Counted
     * rejections may run the bucket into debt, at most one more full bucket.
     */
    static final class TokenBucket extends TierState {
        private long missing;
        private long refilledAt;

        TokenBucket(long window, long now) {
            super(Algorithm.TOKEN_BUCKET, window);
            this.refilledAt = now;
        }

        @Override
        void advance(long now, long limit) {
            // From its deepest debt, two full buckets, a bucket refills within two windows.
            long elapsed = Math.min(now - refilledAt, 2 * window);
            missing = Math.max(0, missing - elapsed * limit);
            refilledAt = now;
        }

        @Override
        long available(long now, long limit) {
            return limit - ceilDiv(missing, window);
        }

        @Override
        void take(long now, long limit, long cost) {
            missing = Math.min(2 * limit * window, missing + cost * window);
        }

        @Override
        long waitMillis(long now, long limit, long cost) {
            long excess = missing + cost * window - limit * window;
            return excess <= 0 ? 0 : ceilDiv(excess, limit);
        }

        @Override
        long resetMillis(long now, long limit) {
            return ceilDiv(missing, limit);
        }
    }
}
