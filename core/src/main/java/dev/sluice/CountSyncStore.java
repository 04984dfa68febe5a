package dev.sluice;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * A shared store that can also take counts made elsewhere: what
 * {@link LocalSyncRateLimitStore} needs of the store it fronts. Each instance of an application
 * decides locally and, once an interval per key, adds what it counted to the store's window
 * counters and reads back what all instances counted together.
 *
 * <p>Only window tiers ({@code FIXED_WINDOW} and {@code SLIDING_WINDOW}) are synced. A sync is
 * atomic for all tiers of one key, and idempotent: a sync sent again with the same instance and
 * sequence (because its first answer was lost) adds nothing the second time. The counters are
 * the ones {@link #tryAcquire} decides with, so instances syncing and instances deciding in the
 * store share one limit. A sync also takes off the permits the instance gave back of calls whose
 * counts it had sent already (see {@link RateLimitStore#giveBack}), as atomically and as
 * exactly once as it adds.
 */
public interface CountSyncStore extends RateLimitStore {

    /**
     * Adds one instance's counts to the key's window counters, and takes off what it gave back,
     * unless this instance's sync of this sequence was taken already, and answers every tier's
     * counts afterwards. Counts never go below zero. A sync never moves the store's time: counts
     * of a window later than the store's current one (the instance's clock ran ahead) were made
     * now, and are added to the current window; counts of a window the store no longer counts
     * are not added.
     *
     * @param key   the key, already qualified by the limiter's name and bounded as every store
     *              bounds keys (so that an instance holds no long key for its syncs): a key longer
     *              than 128 characters, or starting with {@code #}, comes as its digest, and its
     *              counts are those of the key it was bounded from
     * @param tiers the key's window tiers, at least one; no two with the same algorithm and window
     * @param sync  what the instance counted since its last sync, one entry per tier
     * @return the counts of all instances, one entry per tier, as of the store's time; fails
     *         with {@link StoreUnavailableException} when the store cannot be reached in time
     */
    CompletionStage<Totals> sync(String key, List<Tier> tiers, Sync sync);

    /**
     * Counts of one window tier: those of the window starting at {@code windowStart} and of the
     * window before it. For a fixed window the one before does not count and is zero.
     *
     * @param windowStart the window's start, epoch milliseconds, aligned to the tier's window
     * @param current     the count of that window
     * @param previous    the count of the window before
     */
    record WindowCounts(long windowStart, long current, long previous) {

        /**
         * Checks the counts.
         *
         * @throws IllegalArgumentException when a count is negative
         */
        public WindowCounts {
            if (current < 0 || previous < 0) {
                throw new IllegalArgumentException("counts must not be negative: " + current + ", " + previous);
            }
        }
    }

    /**
     * What one instance counted since its last sync, and what it gave back of counts it had synced.
     *
     * @param instance  an id of the instance, the same for all its syncs
     * @param sequence  increasing with every new sync of the instance; a sync sent again keeps it
     * @param counted   per tier, what the instance counted and has not synced yet
     * @param givenBack per tier, the permits to take off the windows of {@code counted}: those of
     *                  calls the instance gave back after it had synced them; empty when there are
     *                  none. A store that does not {@linkplain RateLimitStore#givesBack give back}
     *                  may ignore them.
     */
    record Sync(String instance, long sequence, List<WindowCounts> counted, List<WindowCounts> givenBack) {

        /**
         * Checks and copies.
         *
         * @throws IllegalArgumentException when the sequence is not positive, or what was given
         *         back is not of the windows counted
         */
        public Sync {
            Objects.requireNonNull(instance, "instance");
            if (sequence <= 0) {
                throw new IllegalArgumentException("sequence must be positive, was " + sequence);
            }
            counted = List.copyOf(counted);
            givenBack = List.copyOf(givenBack);
            if (!givenBack.isEmpty()) {
                if (givenBack.size() != counted.size()) {
                    throw new IllegalArgumentException("what was given back needs one entry per tier counted: "
                            + givenBack.size() + " for " + counted.size());
                }
                for (int i = 0; i < counted.size(); i++) {
                    if (givenBack.get(i).windowStart() != counted.get(i).windowStart()) {
                        throw new IllegalArgumentException("what was given back is of the windows counted: "
                                + givenBack.get(i) + " beside " + counted.get(i));
                    }
                }
            }
        }

        /**
         * A sync that gives nothing back.
         *
         * @param instance an id of the instance, the same for all its syncs
         * @param sequence increasing with every new sync of the instance; a sync sent again keeps it
         * @param counted  per tier, what the instance counted and has not synced yet
         */
        public Sync(String instance, long sequence, List<WindowCounts> counted) {
            this(instance, sequence, counted, List.of());
        }
    }

    /**
     * The counts of all instances after a sync.
     *
     * @param now    the store's time when it synced, epoch milliseconds
     * @param counts per tier, in the order of the request
     */
    record Totals(long now, List<WindowCounts> counts) {

        /** Copies the counts. */
        public Totals {
            counts = List.copyOf(counts);
        }
    }
}
