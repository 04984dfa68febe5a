package dev.sluice;

import java.time.Duration;

/**
 * Durations of whole milliseconds for decisions, shared rather than made for each one: the
 * decisions of a busy key, and of keys with the same window, carry the same few values.
 */
final class Durations {

    /** A power of two, covering the resets of one-second windows, which span a second. */
    private static final int SLOTS = 4096;

    /**
     * The last duration made for each slot; slots are read and written without locks, which is
     * safe because a {@link Duration} is immutable and its fields are final.
     */
    private static final Duration[] RECENT = new Duration[SLOTS];

    private Durations() {
    }

    /**
     * {@link Duration#ofMillis} for a value that is not negative, shared when it was asked for
     * lately.
     */
    static Duration ofMillis(long millis) {
        if (millis == 0) {
            return Duration.ZERO;
        }
        int slot = (int) millis & (SLOTS - 1);
        Duration recent = RECENT[slot];
        long seconds = millis / 1000;
        int nanos = (int) (millis - seconds * 1000) * 1_000_000;
        if (recent != null && recent.getSeconds() == seconds && recent.getNano() == nanos) {
            return recent;
        }
        Duration made = Duration.ofSeconds(seconds, nanos);
        RECENT[slot] = made;
        return made;
    }

    /** The whole milliseconds of a duration that is not negative, a part of one counted whole. */
    static long ceilMillis(Duration duration) {
        long millis = duration.toMillis();
        return duration.getNano() % 1_000_000 == 0 ? millis : millis + 1;
    }
}
