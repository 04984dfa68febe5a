package dev.sluice.redisson;

import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreUnavailableException;
import dev.sluice.internal.DaemonThreads;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.redisson.client.RedisTimeoutException;

/**
 * How a Redis store sends a decision, the same for every store of this module: through the
 * store's circuit breaker, within its timeout whatever the client's own settings, and, until
 * the client has answered once, from a thread of its own, because a lazily initialised Redisson
 * client connects on the thread of its first command, for as long as connecting takes. Every
 * failure the breaker takes for an outage becomes a {@link StoreUnavailableException} that names
 * no key; other exceptions (by default programming errors) reach the caller as they are. A reply that comes
 * after its caller gave up, within {@link #LATE_REPLIES}, is handed to the store, to take back
 * what it counted.
 */
final class RedisCalls {

    /** What a failed call suggests to its caller: when a store is worth asking again. */
    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    /**
     * How long Redisson waits for a reply, and so how late one may come and still be taken
     * back: the store's own timeout answers the caller long before.
     */
    static final Duration LATE_REPLIES = Duration.ofMinutes(1);

    private static final int MAX_DETAIL_LENGTH = 200;

    /**
     * Where the Redis stores complete asynchronous decisions unless told otherwise: a few named
     * daemon threads, so that callers' continuations run neither on Redisson's netty threads nor
     * on the common fork-join pool, which has one thread on a 2-core machine. Threads are made
     * when needed, as many as cores (at least 2), and end after 10 seconds idle.
     */
    static final Executor COMPLETIONS = completions();

    private final Duration timeout;
    private final StoreCircuitBreaker breaker;
    /**
     * Where sends wait while the client connects: one thread at most, which ends as soon as it
     * has nothing left to send, so that none outlives the warm-up or an application that failed
     * to start (a servlet container reports such a thread as leaked).
     */
    private final Executor connector = new ThreadPoolExecutor(0, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
            task -> {
                Thread thread = new Thread(task, "sluice-redis-connect");
                thread.setDaemon(true);
                return thread;
            });
    private volatile boolean connected;

    RedisCalls(Duration timeout, StoreCircuitBreaker breaker) {
        this.timeout = timeout;
        this.breaker = breaker;
    }

    /**
     * Sends a call unless the breaker is open, and waits on the calling thread for its answer,
     * for at most the timeout.
     *
     * @param keys       the keys the command names, kept out of any message
     * @param command    sends the command
     * @param unreceived given a reply that came after the caller had given up
     * @param decision   reads the reply; what it throws is a failure of the store too
     * @return the decision
     * @throws StoreUnavailableException when the store did not decide in time, or failed
     */
    <T, R> R callAndWait(Collection<?> keys, Supplier<CompletableFuture<T>> command, Consumer<T> unreceived,
                         Function<T, R> decision) {
        StoreCircuitBreaker.Permit permit = permit();
        CompletableFuture<T> reply = dispatch(command, unreceived);
        try {
            return answered(permit, reply.get(timeout.toNanos(), TimeUnit.NANOSECONDS), decision, keys);
        } catch (ExecutionException e) {
            throw failed(permit, e.getCause(), keys);
        } catch (TimeoutException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // From now on an answer goes to unreceived, unless it won the race just now.
            reply.completeExceptionally(e);
            try {
                return answered(permit, reply.join(), decision, keys);
            } catch (CompletionException lost) {
                throw failed(permit, unwrap(lost), keys);
            }
        }
    }

    /**
     * Sends a call through a sender that keeps the deadline itself, unless the breaker is open,
     * and waits on the calling thread for its answer. The sender's stage fails with a
     * {@link TimeoutException} when the call was sent and had no reply in time, and hands a
     * reply that comes later to whoever takes it back.
     *
     * @param keys     the keys the command names, kept out of any message
     * @param sent     sends the command
     * @param decision reads the reply; what it throws is a failure of the store too
     * @return the decision
     * @throws StoreUnavailableException when the store did not decide in time, or failed
     */
    <T, R> R sentAndWait(Collection<?> keys, Supplier<CompletableFuture<T>> sent, Function<T, R> decision) {
        StoreCircuitBreaker.Permit permit = permit();
        CompletableFuture<T> reply = send(sent);
        try {
            return answered(permit, reply.get(), decision, keys);
        } catch (ExecutionException e) {
            throw failed(permit, e.getCause(), keys);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            // From now on an answer goes to the sender's late replies, unless it won the race just now.
            reply.completeExceptionally(e);
            try {
                return answered(permit, reply.join(), decision, keys);
            } catch (CompletionException lost) {
                throw failed(permit, unwrap(lost), keys);
            }
        }
    }

    /**
     * {@link #sentAndWait} without blocking.
     *
     * @param keys     the keys the command names, kept out of any message
     * @param sent     sends the command
     * @param decision reads the reply; what it throws is a failure of the store too
     * @return the decision, or a stage failed with {@link StoreUnavailableException}
     */
    <T, R> CompletableFuture<R> sent(Collection<?> keys, Supplier<CompletableFuture<T>> sent, Function<T, R> decision) {
        StoreCircuitBreaker.Permit permit;
        try {
            permit = permit();
        } catch (StoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
        return send(sent).handle((value, failure) -> {
            if (failure != null) {
                throw failed(permit, unwrap(failure), keys);
            }
            return answered(permit, value, decision, keys);
        });
    }

    /**
     * Whether Redis has answered a call of the store yet: until then the client may still be
     * connecting, on the connector thread.
     *
     * @return {@code true} once it has
     */
    boolean connected() {
        return connected;
    }

    /**
     * Runs a send: at once once Redis has answered, and until then from the connector thread,
     * where a lazily initialised client may take its time to connect.
     *
     * @param send sends commands
     */
    void sendFrom(Runnable send) {
        if (connected) {
            send.run();
        } else {
            connector.execute(send);
        }
    }

    /**
     * Sends a call unless the breaker is open, without blocking: the stage fails when the call
     * has no answer within the timeout.
     *
     * @param keys       the keys the command names, kept out of any message
     * @param command    sends the command
     * @param unreceived given a reply that came after the caller had given up
     * @param decision   reads the reply; what it throws is a failure of the store too
     * @return the decision, or a stage failed with {@link StoreUnavailableException}
     */
    <T, R> CompletableFuture<R> call(Collection<?> keys, Supplier<CompletableFuture<T>> command,
                                     Consumer<T> unreceived, Function<T, R> decision) {
        StoreCircuitBreaker.Permit permit;
        try {
            permit = permit();
        } catch (StoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
        return dispatch(command, unreceived).orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .handle((value, failure) -> {
                    if (failure != null) {
                        throw failed(permit, unwrap(failure), keys);
                    }
                    return answered(permit, value, decision, keys);
                });
    }

    /** The breaker's permit to send a call, or its rejection while it is open. */
    private StoreCircuitBreaker.Permit permit() {
        StoreCircuitBreaker.Permit permit = breaker.tryAcquirePermit();
        if (permit == null) {
            throw breaker.rejection();
        }
        return permit;
    }

    /** Sends a command. Its reply's first completion wins. */
    private <T> CompletableFuture<T> dispatch(Supplier<CompletableFuture<T>> command, Consumer<T> unreceived) {
        CompletableFuture<T> reply = new CompletableFuture<>();
        Runnable sending = () -> send(command).whenComplete((value, failure) -> {
            // Whichever settles the caller's stage first, the reply or the deadline, wins.
            boolean received = failure == null ? reply.complete(value) : reply.completeExceptionally(failure);
            if (!received && failure == null) {
                unreceived.accept(value);
            }
        });
        if (connected) {
            sending.run();
        } else {
            connector.execute(() -> {
                // A caller that has given up needs no command sent late.
                if (!reply.isDone()) {
                    sending.run();
                }
            });
        }
        return reply;
    }

    private <T, R> R answered(StoreCircuitBreaker.Permit permit, T reply, Function<T, R> decision,
                              Collection<?> keys) {
        R decided;
        try {
            decided = decision.apply(reply);
        } catch (RuntimeException e) {
            throw failed(permit, e, keys);
        }
        if (!connected) {
            connected = true;
        }
        permit.onSuccess();
        return decided;
    }

    /**
     * What a failed call throws: an outage, as the breaker tells them (the store's own deadline
     * always is one), becomes a {@link StoreUnavailableException} naming no key; any other
     * exception reaches the caller as it is.
     */
    private RuntimeException failed(StoreCircuitBreaker.Permit permit, Throwable failure, Collection<?> keys) {
        if (failure instanceof TimeoutException || breaker.isOutage(failure)) {
            StoreUnavailableException unavailable = unavailable(failure, keys);
            permit.onFailure(unavailable);
            return unavailable;
        }
        permit.onFailure(failure);
        return failure instanceof RuntimeException runtime ? runtime : new CompletionException(failure);
    }

    /**
     * Sends a command from the connector thread, outside the breaker and without a deadline: a
     * lazily initialised client connects meanwhile, and calls no longer need to go round.
     *
     * @param command a command that prepares for calls, such as loading a script
     * @return a stage completing when it is done, or failed with {@link StoreUnavailableException}
     */
    <T> CompletableFuture<Void> warmUp(Supplier<CompletableFuture<T>> command) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        connector.execute(() -> send(command).whenComplete((value, failure) -> {
            if (failure == null) {
                connected = true;
                done.complete(null);
            } else {
                done.completeExceptionally(unavailable(unwrap(failure), List.of()));
            }
        }));
        return done;
    }

    /**
     * The circuit breaker of a store: the one it was given, or its own.
     *
     * @param given   the breaker the store's builder was given, if any
     * @param timeout the store's timeout
     * @param store   the store's name, for log lines and messages
     * @return {@code given}, or by default one that opens for the longer of 1 second and the timeout
     * @throws IllegalArgumentException when {@code given} opens for less than the timeout: its
     *         probe could go out while calls sent before it opened can still fail
     */
    static StoreCircuitBreaker breaker(@Nullable StoreCircuitBreaker given, Duration timeout, String store) {
        if (given == null) {
            return StoreCircuitBreaker.builder().name(store).openDuration(openDurationFor(timeout)).build();
        }
        if (given.openDuration().compareTo(timeout) < 0) {
            throw new IllegalArgumentException("The circuit breaker's openDuration (" + given.openDuration().toMillis()
                    + " ms) is shorter than the " + store + " timeout (" + timeout.toMillis() + " ms): its probe"
                    + " could be sent while calls sent before it opened can still fail. Give the breaker an"
                    + " openDuration of at least " + timeout.toMillis() + " ms.");
        }
        return given;
    }

    /**
     * The open duration of a breaker for a store with this timeout, unless told otherwise.
     *
     * @param timeout the store's timeout
     * @return the longer of {@link StoreCircuitBreaker#DEFAULT_OPEN_DURATION} and the timeout
     */
    static Duration openDurationFor(Duration timeout) {
        return timeout.compareTo(StoreCircuitBreaker.DEFAULT_OPEN_DURATION) > 0 ? timeout
                : StoreCircuitBreaker.DEFAULT_OPEN_DURATION;
    }

    /**
     * Checks a store's timeout.
     *
     * @param timeout the timeout a builder was given
     * @return the timeout
     * @throws IllegalArgumentException when it is shorter than 2 ms
     */
    static Duration checkTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.toMillis() < 2) {
            throw new IllegalArgumentException("timeout must be at least 2 ms, was " + timeout);
        }
        return timeout;
    }

    private static <T> CompletableFuture<T> send(Supplier<CompletableFuture<T>> command) {
        try {
            return command.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private StoreUnavailableException unavailable(Throwable failure, Collection<?> keys) {
        if (failure instanceof StoreUnavailableException unavailable) {
            return unavailable;
        }
        if (failure instanceof TimeoutException || failure instanceof RedisTimeoutException) {
            return new StoreUnavailableException("Redis did not answer within " + timeout.toMillis() + " ms",
                    RETRY_AFTER);
        }
        // The innermost cause with a message says what failed, and Redisson's first sentence of it; the rest is
        // advice that does not apply here (more retries).
        Throwable described = failure;
        for (Throwable cause = failure.getCause(); cause != null; cause = cause.getCause()) {
            if (cause.getMessage() != null) {
                described = cause;
            }
        }
        String detail = described.getMessage() == null ? "" : ": " + described.getMessage().split("[.!] ", 2)[0];
        for (Object key : keys) {
            detail = detail.replace(key.toString(), "<key>");
        }
        if (detail.length() > MAX_DETAIL_LENGTH) {
            detail = detail.substring(0, MAX_DETAIL_LENGTH) + "...";
        }
        return new StoreUnavailableException("Redis failed: " + described.getClass().getSimpleName() + detail,
                RETRY_AFTER);
    }

    /**
     * The same outcome, completed on {@code executor}: Redisson completes its futures on its
     * netty threads, where the caller's continuation (a limited method's body) must not run. An
     * executor that refuses the task (shut down, or full) does not lose the outcome: it is then
     * completed on the thread that has it.
     */
    private static Executor completions() {
        return DaemonThreads.pool("sluice-redis");
    }

    static <T> CompletableFuture<T> completeOn(Executor executor, CompletableFuture<T> stage) {
        CompletableFuture<T> handedOver = new CompletableFuture<>();
        stage.whenComplete((value, failure) -> {
            Runnable handOver = () -> complete(handedOver, value, failure);
            try {
                executor.execute(handOver);
            } catch (RejectedExecutionException e) {
                handOver.run();
            }
        });
        return handedOver;
    }

    private static <T> void complete(CompletableFuture<T> future, T value, Throwable failure) {
        if (failure == null) {
            future.complete(value);
        } else {
            future.completeExceptionally(unwrap(failure));
        }
    }

    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

}
