package dev.sluice.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;

/**
 * The calls a store's stand-in admitted, by key and time: the local fallback store that decides
 * while the store cannot be reached, or the in-memory store that decides what an overloaded Redis
 * store cannot queue. A call's permits go back to the store that took them, and a give-back or a
 * recount comes with only the call's key, cost and when it was admitted: a call the stand-in
 * admitted is found here by those, the admission of that key and cost nearest in time within a
 * second, and goes to the stand-in; any other goes to the store. Each admission is found once.
 * Bounded: the admissions of the last hour, at most {@value #MAX_KEYS} keys and
 * {@value #MAX_PER_KEY} admissions of a key. Thread-safe. Shared by Sluice's stores and limiters;
 * not API (see the package).
 */
public final class LocalAdmissions {

    private static final int MAX_KEYS = 100_000;
    private static final int MAX_PER_KEY = 1_024;
    /** How far a call's time, as its caller took it, may be from when the stand-in admitted it. */
    private static final long NEAR_MILLIS = 1_000;
    /** How long an admission is remembered: calls given back after longer are counted where they stand. */
    private static final Duration REMEMBERED = Duration.ofHours(1);

    private final InstantSource clock;
    private final Cache<String, Deque<long[]>> admissions = Caffeine.newBuilder()
            .maximumSize(MAX_KEYS)
            .expireAfterWrite(REMEMBERED)
            .build();

    /**
     * Remembers admissions by {@code clock}'s time.
     *
     * @param clock the clock of the limiter or store whose calls these are
     */
    public LocalAdmissions(InstantSource clock) {
        this.clock = clock;
    }

    /**
     * The stand-in admitted a call now.
     *
     * @param key  the store key
     * @param cost the permits it took
     */
    public void admitted(String key, long cost) {
        long now = clock.millis();
        admissions.asMap().compute(key, (k, held) -> {
            Deque<long[]> calls = held != null ? held : new ArrayDeque<>(1);
            if (calls.size() == MAX_PER_KEY) {
                calls.removeFirst();
            }
            calls.addLast(new long[] {now, cost});
            return calls;
        });
    }

    /**
     * Whether the stand-in admitted a call of this key and cost at about {@code atMillis}; if so,
     * it is forgotten, so that it is not given back twice.
     *
     * @param key      the store key
     * @param cost     the permits the call took
     * @param atMillis when the call was admitted, by the same clock
     * @return whether the stand-in admitted it
     */
    public boolean taken(String key, long cost, long atMillis) {
        if (admissions.estimatedSize() == 0) {
            return false;
        }
        boolean[] found = {false};
        admissions.asMap().computeIfPresent(key, (k, calls) -> {
            long[] nearest = null;
            for (long[] call : calls) {
                long distance = Math.abs(call[0] - atMillis);
                if (call[1] == cost && distance <= NEAR_MILLIS
                        && (nearest == null || distance < Math.abs(nearest[0] - atMillis))) {
                    nearest = call;
                }
            }
            if (nearest != null) {
                found[0] = true;
                for (Iterator<long[]> each = calls.iterator(); each.hasNext(); ) {
                    if (each.next() == nearest) {
                        each.remove();
                        break;
                    }
                }
            }
            return calls.isEmpty() ? null : calls;
        });
        return found[0];
    }

    /**
     * {@link #taken(String, long, long)} for a call admitted {@code ago} before this clock's now.
     *
     * @param key  the store key
     * @param cost the permits the call took
     * @param ago  how long ago the call was admitted
     * @return whether the stand-in admitted it
     */
    public boolean taken(String key, long cost, Duration ago) {
        return admissions.estimatedSize() != 0 && taken(key, cost, clock.millis() - Ago.millis(ago));
    }
}
