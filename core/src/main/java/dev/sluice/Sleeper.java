package dev.sluice;

import dev.sluice.internal.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
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
     * continuation runs there, never on the common fork-join pool. A limiter cancels the stage
     * (when it is a {@link java.util.concurrent.Future}) once its caller has gone: the system
     * sleeper then drops its timer.
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

    /** Completes on the waits pool when its timer fires; cancelled, it drops the timer at once. */
    @Override
    public CompletionStage<Void> sleepAsync(Duration duration) {
        CompletableFuture<Void> slept = new CompletableFuture<>();
        ScheduledFuture<?> timer = Timers.SCHEDULER.schedule(
                () -> DaemonThreads.waits().execute(() -> slept.complete(null)),
                duration.toNanos(), TimeUnit.NANOSECONDS);
        slept.whenComplete((done, failure) -> {
            if (slept.isCancelled()) {
                timer.cancel(false);
            }
        });
        return slept;
    }

    @Override
    public void sleep(Duration duration, CompletionStage<?> wakeUp) throws InterruptedException {
        try {
            wakeUp.toCompletableFuture().get(duration.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException | CancellationException e) {
            // Slept the whole duration, or woken all the same.
        }
    }

    /** As {@link #sleepAsync(Duration)}; woken, or cancelled, it drops its timer. */
    @Override
    public CompletionStage<Void> sleepAsync(Duration duration, CompletionStage<?> wakeUp) {
        CompletableFuture<Void> timer = sleepAsync(duration).toCompletableFuture();
        CompletableFuture<Void> slept = new CompletableFuture<>();
        timer.thenRun(() -> slept.complete(null));
        wakeUp.whenComplete((woken, failure) -> DaemonThreads.waits().execute(() -> slept.complete(null)));
        slept.whenComplete((done, failure) -> timer.cancel(false));
        return slept;
    }

    /** The one timer thread of the system sleeper; it only hands completions to the waits pool. */
    private static final class Timers {
        static final ScheduledThreadPoolExecutor SCHEDULER = scheduler();

        private static ScheduledThreadPoolExecutor scheduler() {
            ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, task -> {
                Thread thread = new Thread(task, "sluice-wait-timer");
                thread.setDaemon(true);
                return thread;
            });
            // A cancelled timer leaves the queue at once, rather than when it would have fired.
            scheduler.setRemoveOnCancelPolicy(true);
            return scheduler;
        }
    }
}
