package dev.sluice;

import dev.sluice.internal.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * How a {@link RateLimiter} waits for a permit. The system sleeper blocks the thread (or, for
 * asynchronous calls, schedules the continuation); tests pass one that moves a test clock
 * instead, so that nothing really waits.
 */
public interface Sleeper {

    /**
     * Blocks the calling thread for {@code duration}.
     *
     * @param duration how long, positive
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    void sleep(Duration duration) throws InterruptedException;

    /**
     * Completes after {@code duration} without blocking the caller. The default completes on
     * Sluice's own daemon threads, named {@code sluice-wait-<n>}, as many as cores: the caller's
     * continuation runs there, never on the common fork-join pool.
     *
     * @param duration how long, positive
     * @return a stage completing after the wait
     */
    default CompletionStage<Void> sleepAsync(Duration duration) {
        return CompletableFuture.runAsync(() -> { },
                CompletableFuture.delayedExecutor(duration.toNanos(), TimeUnit.NANOSECONDS, DaemonThreads.waits()));
    }

    /**
     * The sleeper that really waits: {@link TimeUnit#sleep(long)} and a delayed executor.
     *
     * @return the system sleeper
     */
    static Sleeper system() {
        return duration -> TimeUnit.NANOSECONDS.sleep(duration.toNanos());
    }
}
