package dev.sluice;

import dev.sluice.internal.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
     * Blocks the calling thread for {@code duration}, or until {@code wakeUp} completes if that
     * is sooner: how a caller waiting for a permit held by a running call is woken when the call
     * ends. By default it sleeps the whole duration, as {@link #sleep(Duration)}.
     *
     * @param duration how long at most, positive
     * @param wakeUp   completes when the caller may ask again
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    default void sleep(Duration duration, CompletionStage<?> wakeUp) throws InterruptedException {
        sleep(duration);
    }

    /**
     * Completes after {@code duration}, or once {@code wakeUp} completes if that is sooner,
     * without blocking the caller. By default it waits the whole duration, as
     * {@link #sleepAsync(Duration)}.
     *
     * @param duration how long at most, positive
     * @param wakeUp   completes when the caller may ask again
     * @return a stage completing after the wait
     */
    default CompletionStage<Void> sleepAsync(Duration duration, CompletionStage<?> wakeUp) {
        return sleepAsync(duration);
    }

    /**
     * The sleeper that really waits, {@link TimeUnit#sleep(long)} and a delayed executor, and
     * wakes early when told to.
     *
     * @return the system sleeper
     */
    static Sleeper system() {
        return SystemSleeper.INSTANCE;
    }
}

/** {@link Sleeper#system()}. */
final class SystemSleeper implements Sleeper {

    static final Sleeper INSTANCE = new SystemSleeper();

    private SystemSleeper() {
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(duration.toNanos());
    }

    @Override
    public void sleep(Duration duration, CompletionStage<?> wakeUp) throws InterruptedException {
        try {
            wakeUp.toCompletableFuture().get(duration.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException | CancellationException e) {
            // Slept the whole duration, or woken all the same.
        }
    }

    @Override
    public CompletionStage<Void> sleepAsync(Duration duration, CompletionStage<?> wakeUp) {
        return CompletableFuture.anyOf(sleepAsync(duration).toCompletableFuture(),
                wakeUp.toCompletableFuture().handle((done, failure) -> null)).thenApply(done -> null);
    }
}
