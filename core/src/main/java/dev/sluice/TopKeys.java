package dev.sluice;

import dev.sluice.internal.StoreKeys;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Who one limiter is limiting: the keys it rejects most, and the keys whose calls most often take
 * the last tenth of their limit. Each list is a Space-Saving summary (Metwally, Agrawal and El
 * Abbadi, 2005) of a fixed number of counters: memory is bounded whatever the number of keys
 * (a few KB: keys longer than 128 characters are kept as their digest), a call costs O(capacity)
 * at worst and nothing for a call far from its limit, and any key that makes more than
 * {@code 1/capacity} of the counted calls since start is in its list. A count may overstate a
 * key's calls by at most its {@link Entry#overcount()}, never understate them.
 *
 * <p>Keys are personal data (phone numbers, addresses): this class holds them as given, and what
 * shows them decides whether to mask them. Thread-safe.
 */
public final class TopKeys {

    /** The number of counters of each list by default. */
    public static final int DEFAULT_CAPACITY = 16;

    private final Summary rejected;
    private final Summary nearLimit;

    /**
     * A summary of {@link #DEFAULT_CAPACITY} counters per list.
     */
    public TopKeys() {
        this(DEFAULT_CAPACITY);
    }

    /**
     * A summary of {@code capacity} counters per list.
     *
     * @param capacity the counters of each list, at least 1
     * @throws IllegalArgumentException when {@code capacity} is below 1
     */
    public TopKeys(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.rejected = new Summary(capacity);
        this.nearLimit = new Summary(capacity);
    }

    /**
     * Counts one call's decision: a rejection in the rejected list; an admission that left at most
     * a tenth of the binding tier's limit in the near-limit list; nothing otherwise.
     *
     * @param key      the key the call was counted for
     * @param decision its decision
     */
    public void record(String key, Decision decision) {
        if (!decision.allowed()) {
            rejected.add(key);
        } else if (decision.remaining() <= decision.limit() / 10) {
            nearLimit.add(key);
        }
    }

    /**
     * The keys rejected most, most first.
     *
     * @param count how many at most
     * @return the keys with their counts
     */
    public List<Entry> rejected(int count) {
        return rejected.top(count);
    }

    /**
     * The keys most often admitted with at most a tenth of their limit left, most first.
     *
     * @param count how many at most
     * @return the keys with their counts
     */
    public List<Entry> nearLimit(int count) {
        return nearLimit.top(count);
    }

    /**
     * One key of a list.
     *
     * @param key       the key, or its digest ({@code #} and 64 hex digits) when longer than 128
     *                  characters
     * @param count     the calls counted for it since start; at least its true number
     * @param overcount by how much {@code count} may overstate it: the count of the key it took
     *                  the counter of
     */
    public record Entry(String key, long count, long overcount) {
    }

    /** One Space-Saving list. */
    private static final class Summary {

        private final int capacity;
        private final Map<String, long[]> counters;

        Summary(int capacity) {
            this.capacity = capacity;
            this.counters = new HashMap<>(capacity * 2);
        }

        synchronized void add(String key) {
            long[] counter = counters.get(key);
            if (counter == null) {
                String bounded = StoreKeys.bounded(key);
                counter = counters.get(bounded);
                if (counter == null) {
                    counter = take(bounded);
                }
            }
            counter[0]++;
        }

        /** A counter for a key not in the list: a new one, or the least counted one's. */
        private long[] take(String key) {
            if (counters.size() < capacity) {
                long[] counter = {0, 0};
                counters.put(key, counter);
                return counter;
            }
            Map.Entry<String, long[]> least = null;
            for (Map.Entry<String, long[]> entry : counters.entrySet()) {
                if (least == null || entry.getValue()[0] < least.getValue()[0]) {
                    least = entry;
                }
            }
            long[] counter = counters.remove(least.getKey());
            counter[1] = counter[0];
            counters.put(key, counter);
            return counter;
        }

        synchronized List<Entry> top(int count) {
            List<Entry> entries = new ArrayList<>(counters.size());
            counters.forEach((key, counter) -> entries.add(new Entry(key, counter[0], counter[1])));
            entries.sort(Comparator.comparingLong(Entry::count).reversed().thenComparing(Entry::key));
            return List.copyOf(entries.subList(0, Math.min(Math.max(count, 0), entries.size())));
        }
    }
}
