package dev.sluice;

import java.time.Instant;
import java.time.InstantSource;

/**
 * The system clock's time when made, counted on by the JVM's monotonic timer: a clock that
 * neither an operator nor NTP can step, back or forward. It drifts from the system clock only
 * as much as the two timers' rates differ.
 */
final class MonotonicClock implements InstantSource {

    private static final MonotonicClock SYSTEM = new MonotonicClock(InstantSource.system().millis(), System.nanoTime());

    private final long originMillis;
    private final long originNanos;

    private MonotonicClock(long originMillis, long originNanos) {
        this.originMillis = originMillis;
        this.originNanos = originNanos;
    }

    /** The clock started at the system clock's time when Sluice was loaded, which every default shares. */
    static MonotonicClock system() {
        return SYSTEM;
    }

    /**
     * The JVM's monotonic timer, for what a store times for itself (round trips, the age of a
     * sample): never set back or forward, unlike any clock a store is given.
     *
     * @return nanoseconds from an arbitrary origin
     */
    static long nanos() {
        return System.nanoTime();
    }

    @Override
    public long millis() {
        return originMillis + (System.nanoTime() - originNanos) / 1_000_000;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public String toString() {
        return "MonotonicClock[" + instant() + "]";
    }
}
