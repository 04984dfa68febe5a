package dev.sluice.redisson;

import java.time.Instant;
import java.time.InstantSource;

/**
 * The Redis server's clock as this client sees it, so that a call can carry a deadline in server
 * time: the script refuses a call that reaches the server after it (one that waited behind a
 * paused or stalled server while its caller gave up) instead of counting it.
 *
 * <p>Every reply carries the server's time. The server's time minus the client's time when the
 * reply arrives is at most the true offset between the clocks (the reply took a while to
 * arrive), so the largest such difference seen recently is the closest estimate, and it errs
 * towards an earlier deadline. Samples are kept for two windows of 10 seconds, so a clock that is
 * set back is followed within 20 seconds. Thread-safe.
 */
final class ServerClock {

    /** No deadline: the server's clock has not been seen yet. */
    static final long NO_DEADLINE = -1;

    private static final long UNKNOWN = Long.MIN_VALUE;
    private static final long WINDOW_MILLIS = 10_000;

    private final InstantSource clientClock;
    private volatile long windowStart = UNKNOWN;
    private volatile long windowMax = UNKNOWN;
    private volatile long offset = UNKNOWN;

    ServerClock(InstantSource clientClock) {
        this.clientClock = clientClock;
    }

    /**
     * The server's clock as seen from this JVM's monotonic timer, started at the system clock's
     * time: the offset it learns holds when the system clock is set back or forward.
     *
     * @return a new reading of the server's clock
     */
    static ServerClock monotonic() {
        long originMillis = InstantSource.system().millis();
        long originNanos = System.nanoTime();
        return new ServerClock(() -> Instant.ofEpochMilli(originMillis + (System.nanoTime() - originNanos) / 1_000_000));
    }

    /**
     * Learns from a reply.
     *
     * @param serverMillis the server's time in the reply, in epoch milliseconds
     */
    void sample(long serverMillis) {
        long now = clientClock.millis();
        long sample = serverMillis - now;
        if (sample <= windowMax && now - windowStart < WINDOW_MILLIS) {
            return;
        }
        synchronized (this) {
            long previousMax = UNKNOWN;
            if (windowStart == UNKNOWN || now - windowStart >= WINDOW_MILLIS) {
                previousMax = windowStart != UNKNOWN && now - windowStart < 2 * WINDOW_MILLIS ? windowMax : UNKNOWN;
                windowStart = now;
                windowMax = UNKNOWN;
            } else {
                previousMax = offset;
            }
            windowMax = Math.max(windowMax, sample);
            offset = Math.max(windowMax, previousMax);
        }
    }

    /**
     * The server time by which a call sent now must have reached the server.
     *
     * @param budgetMillis how long the call may take to get there
     * @return epoch milliseconds on the server's clock, or {@link #NO_DEADLINE}
     */
    long deadline(long budgetMillis) {
        long known = offset;
        return known == UNKNOWN ? NO_DEADLINE : clientClock.millis() + known + budgetMillis;
    }
}
