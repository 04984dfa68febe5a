package dev.sluice.redisson;

import dev.sluice.redisson.RedissonRateLimitStore.Call;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RScriptAsync;
import org.redisson.api.RedissonClient;

/**
 * Sends the script calls of concurrent decisions together. At most two sends are in flight;
 * calls that come meanwhile wait in a queue and leave together, pipelined in one batch, as soon
 * as a send comes back. There is no timer: on an idle store a call leaves at once, alone. Each
 * call is still one {@code EVALSHA} with its own reply, sent once; what changes is that a busy
 * store writes, and Redis reads, many of them per system call, whatever the client's connection
 * pool settings.
 *
 * <p>Two sends in flight may go over two connections and reach Redis in either order. That is
 * no matter for decisions, each answered at once, but reservations are served in the order
 * Redis takes them: calls that may reserve wait in a queue of their own, and only one send at a
 * time carries them, so that they reach Redis in the order they were sent.
 */
final class ScriptPipeline {

    static final int DEFAULT_BATCH_SIZE = 128;
    static final int MAX_BATCH_SIZE = 1024;
    static final int DEFAULT_MAX_QUEUED = 20_000;
    static final Duration DEFAULT_MAX_QUEUE_WAIT = Duration.ofSeconds(1);

    /** Two sends in flight keep the connection busy while the next batch gathers. */
    private static final int MAX_IN_FLIGHT = 2;
    /** A bound on one batch, so that one slow batch does not hold up many callers. */
    private static final int MAX_BATCH = 64;

    private final RedissonClient client;
    private final RScript script;
    private final String sha;
    private final BatchOptions batchOptions;
    private final Queue<Pending> queue = new ConcurrentLinkedQueue<>();
    private final Queue<Pending> reserving = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Whether a send carrying calls that may reserve is in flight. */
    private final AtomicBoolean reservingInFlight = new AtomicBoolean();
    private final long sendTimeoutMillis;

    /**
     * @param client          the client to send with
     * @param script          the client's scripts, with {@link DecisionCodec}, one attempt per call and the given
     *                        response timeout
     * @param sha             the SHA-1 of the script every call runs
     * @param responseTimeout how long Redisson waits for a reply, as for {@code script}
     * @param sendTimeout     how long a send counts as in flight at most: the store's timeout, after
     *                        which its callers have had their answer anyway, so that a server that
     *                        stopped answering holds up no later call for longer
     */
    ScriptPipeline(RedissonClient client, RScript script, String sha, Duration responseTimeout, Duration sendTimeout) {
        this.client = client;
        this.script = script;
        this.sha = sha;
        // One attempt, as for single calls: a retried batch would count its calls twice.
        this.batchOptions = BatchOptions.defaults().retryAttempts(0)
                .responseTimeout(responseTimeout.toMillis(), TimeUnit.MILLISECONDS);
        this.sendTimeoutMillis = sendTimeout.toMillis();
    }

    /** Runs the script for a call: the reply's bytes, as Redis sent them. */
    CompletableFuture<byte[]> send(Call call) {
        Pending pending = new Pending(call, new CompletableFuture<>());
        (call.reserves() ? reserving : queue).add(pending);
        drain();
        return pending.reply;
    }

    /**
     * Sends what is queued while fewer than two sends are in flight. A send that comes back, or
     * outlives the store's timeout, drains again, so a call queued while two were in flight leaves
     * with the next batch.
     */
    private void drain() {
        while (!queue.isEmpty() || !reserving.isEmpty() && !reservingInFlight.get()) {
            int sending = inFlight.get();
            if (sending >= MAX_IN_FLIGHT) {
                return;
            }
            if (!inFlight.compareAndSet(sending, sending + 1)) {
                continue;
            }
            List<Pending> batch = new ArrayList<>();
            // Only the send that holds the flag takes calls that may reserve, in the order they came.
            boolean carriesReserving = !reserving.isEmpty() && reservingInFlight.compareAndSet(false, true);
            Pending next;
            while (carriesReserving && batch.size() < MAX_BATCH && (next = reserving.poll()) != null) {
                batch.add(next);
            }
            while (batch.size() < MAX_BATCH && (next = queue.poll()) != null) {
                batch.add(next);
            }
            CompletableFuture<?> sent = switch (batch.size()) {
                case 0 -> CompletableFuture.completedFuture(null);
                case 1 -> sendAlone(batch.get(0));
                default -> sendTogether(batch);
            };
            sent.copy().completeOnTimeout(null, sendTimeoutMillis, TimeUnit.MILLISECONDS).whenComplete((done, failure) -> {
                if (carriesReserving) {
                    reservingInFlight.set(false);
                }
                inFlight.decrementAndGet();
                drain();
            });
        }
    }

    private CompletableFuture<?> sendAlone(Pending pending) {
        Call call = pending.call;
        CompletableFuture<byte[]> reply = script.<byte[]>evalShaAsync(call.slotKey(),
                RScript.Mode.READ_WRITE, sha, RScript.ReturnType.VALUE, call.keys(), call.arguments()).toCompletableFuture();
        reply.whenComplete(pending::complete);
        return reply;
    }

    private CompletableFuture<?> sendTogether(List<Pending> batch) {
        RBatch pipeline = client.createBatch(batchOptions);
        RScriptAsync scripts = pipeline.getScript(DecisionCodec.INSTANCE);
        for (Pending pending : batch) {
            Call call = pending.call;
            scripts.<byte[]>evalShaAsync(call.slotKey(), RScript.Mode.READ_WRITE, sha, RScript.ReturnType.VALUE,
                    call.keys(), call.arguments()).whenComplete(pending::complete);
        }
        CompletableFuture<?> executed = pipeline.executeAsync().toCompletableFuture();
        // A batch that fails as a whole (no connection, a timeout) may leave its calls unanswered.
        executed.whenComplete((result, failure) -> {
            if (failure != null) {
                batch.forEach(pending -> pending.reply.completeExceptionally(failure));
            }
        });
        return executed;
    }

    /** A call waiting for its reply. */
    private record Pending(Call call, CompletableFuture<byte[]> reply) {

        void complete(byte[] result, Throwable failure) {
            if (failure != null) {
                reply.completeExceptionally(failure);
            } else {
                reply.complete(result);
            }
        }
    }
}
