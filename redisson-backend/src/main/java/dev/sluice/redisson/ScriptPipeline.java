package dev.sluice.redisson;

import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreOverloadedException;
import dev.sluice.StoreQueue;
import dev.sluice.redisson.RedissonRateLimitStore.Call;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.redisson.Redisson;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RScriptAsync;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisClusterDownException;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisLoadingException;
import org.redisson.client.RedisMasterDownException;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.RedisNodeNotFoundException;
import org.redisson.client.RedisReadonlyException;
import org.redisson.client.RedisTryAgainException;
import org.redisson.connection.CRC16;
import org.redisson.connection.MasterSlaveEntry;

/**
 * Sends decisions to Redis many at a time. At most two script calls are in flight; decisions
 * that come meanwhile wait in a bounded queue and leave together, as soon as a script call comes
 * back, as one {@code decide.lua} call that decides them all in the order they came. There is no
 * timer: on an idle store a decision leaves at once, alone. On one server any decisions may share
 * a script call; in a cluster, those whose keys share a hash slot do, and the script calls of one
 * send go pipelined, a batch per master, so that each gets its own master's answer: one master's
 * error neither fails nor sends again what another master ran.
 *
 * <p><strong>Time.</strong> A decision's deadline counts from when its script call is sent: time
 * waiting in the queue is not Redis being slow. A script call without a reply within the timeout
 * fails its decisions with {@link TimeoutException}, unless Redis is known to be there: the server
 * of its keys answers a read ({@code EXISTS}, asked at half the timeout), or turned the call away
 * for a moment; then it is given another period, up to {@link #MAX_GRACE_PERIODS}. Until that
 * read is answered, a call waits for it, and a call whose timer fired late or whose machine has
 * every core busy (this JVM may be what is slow, not Redis) waits, but never longer than twice
 * the timeout and 50 ms after it was sent, or queued behind calls Redis did not answer: a server
 * that stopped answering costs a call at most twice the timeout and 100 ms. A reply that comes
 * after its decisions failed goes to each decision's late-reply consumer, to be taken back.
 *
 * <p><strong>Overload.</strong> A decision that finds {@code maxQueued} waiting, or whose turn
 * comes after it waited {@code maxQueueWait}, fails with {@link StoreOverloadedException}, which
 * is never sent and never counts as an outage.
 *
 * <p><strong>Order.</strong> Two script calls in flight may go over two connections and reach
 * Redis in either order. That is no matter for decisions, each answered at once, but reservations
 * are served in the order Redis takes them: decisions that may reserve wait in a queue of their
 * own, and only one script call at a time carries them.
 */
final class ScriptPipeline implements StoreQueue {

    static final int DEFAULT_BATCH_SIZE = 128;
    static final int MAX_BATCH_SIZE = 1024;
    static final int DEFAULT_MAX_QUEUED = 20_000;
    static final Duration DEFAULT_MAX_QUEUE_WAIT = Duration.ofSeconds(1);

    /** Two script calls in flight keep the connection busy while the next one gathers. */
    private static final int MAX_IN_FLIGHT = 2;
    /** The bytes of one result of a script call: ten doubles. */
    private static final int RESULT_BYTES = 80;
    /** The figure of a result that says how many calls in a row it answers. */
    private static final int RUN = 9;
    /** How many more periods a script call gets while its timer keeps firing late. */
    private static final int MAX_GRACE_PERIODS = 8;
    /** How soon a script call Redis refused without running it for a moment is sent again. */
    private static final long RESEND_MILLIS = 10;
    /**
     * What a send may wait past twice the timeout for a read asking whether its server is alive:
     * half of the 100 ms a caller is promised, the other half left for this JVM to run on.
     */
    private static final long CAP_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** How late a timer may fire and still be taken as on time. */
    private static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /**
     * The timer of every pipeline's sends, one daemon thread for the JVM: a check is a few
     * completions, and a pipeline has at most one scheduled.
     */
    private static final ScheduledExecutorService TIMER = timer();

    private final RedissonClient client;
    private final RScript scripts;
    /** A cluster's script calls go pipelined, a batch per master, with one attempt, as single ones go. */
    private final BatchOptions batchOptions = BatchOptions.defaults().retryAttempts(0)
            .responseTimeout(RedisCalls.LATE_REPLIES.toMillis(), TimeUnit.MILLISECONDS);
    private final String script;
    private final String sha;
    private final StoreCircuitBreaker breaker;
    private final ServerClock serverClock;
    private final boolean cluster;
    private final int batchSize;
    private final int maxQueued;
    private final long maxQueueWaitNanos;
    private final long timeoutNanos;
    /**
     * The longest a send waits for its reply unless Redis is known to be there: twice the
     * timeout and {@link #CAP_SLACK_NANOS}, time for a read asking whether the server is alive.
     */
    private final long capNanos;
    private final Queue<Pending> queue = new ConcurrentLinkedQueue<>();
    private final Queue<Pending> reserving = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Whether a script call carrying decisions that may reserve is in flight. */
    private final AtomicBoolean reservingInFlight = new AtomicBoolean();
    private final LongAdder overloaded = new LongAdder();
    /** The sends in flight, at most two. */
    private final Queue<InFlight> sends = new ConcurrentLinkedQueue<>();
    /** Guards the check of the sends in flight that is scheduled: at most one counts, the earliest. */
    private final Object timerLock = new Object();
    /** Whether a check is scheduled, when for, and which: a check scheduled earlier replaces it. */
    private boolean checkArmed;
    private long checkAt;
    private long checkNumber;
    /**
     * Whether the latest send timed out without a word from Redis, and no reply came since: then
     * the decisions that waited in the queue meanwhile have waited for Redis too.
     */
    private volatile boolean silent;
    private final RedisCalls redis;

    /** How the pipeline is set up. */
    record Settings(int batchSize, int maxQueued, Duration maxQueueWait, Duration timeout) {
    }

    /**
     * @param client     the client to send with
     * @param scripts    the client's scripts, with {@link DecisionCodec}, one attempt per call and a
     *                   response timeout long enough for late replies
     * @param script     the script every call runs
     * @param sha        its SHA-1
     * @param breaker    the store's breaker: queued decisions are not sent while it is open
     * @param serverClock the store's reading of the server's clock, for deadlines
     * @param redis      how the store sends: from where, until Redis has answered once
     * @param settings   sizes and times
     */
    ScriptPipeline(RedissonClient client, RScript scripts, String script, String sha, StoreCircuitBreaker breaker,
                   ServerClock serverClock, RedisCalls redis, Settings settings) {
        this.client = client;
        this.scripts = scripts;
        this.script = script;
        this.sha = sha;
        this.breaker = breaker;
        this.serverClock = serverClock;
        this.redis = redis;
        this.cluster = client.getConfig().isClusterConfig();
        this.batchSize = settings.batchSize();
        this.maxQueued = settings.maxQueued();
        this.maxQueueWaitNanos = settings.maxQueueWait().toNanos();
        this.timeoutNanos = settings.timeout().toNanos();
        this.capNanos = 2 * timeoutNanos + CAP_SLACK_NANOS;
    }

    /**
     * Queues a decision to be sent.
     *
     * @param call the decision's script call
     * @param late given the reply when it comes after the returned stage failed
     * @return its reply's bytes; or failed with {@link TimeoutException} when it was sent and had
     *         no reply in time, {@link StoreOverloadedException} when it was not sent in time,
     *         or what Redis or the client failed it with
     */
    CompletableFuture<byte[]> send(Call call, Consumer<byte[]> late) {
        Pending pending = new Pending(call, late, new CompletableFuture<>(), System.nanoTime());
        if (queued.incrementAndGet() > maxQueued) {
            queued.decrementAndGet();
            overload(pending, maxQueued + " decisions are waiting to be sent");
            return pending.reply;
        }
        (call.reserves() ? reserving : queue).add(pending);
        drain();
        return pending.reply;
    }

    @Override
    public int queued() {
        return queued.get();
    }

    @Override
    public int capacity() {
        return maxQueued;
    }

    @Override
    public long overloaded() {
        return overloaded.sum();
    }

    /**
     * Sends what is queued while fewer than two script calls are in flight. One that comes back,
     * or times out, drains again, so a decision queued meanwhile leaves with the next.
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
            // Only the send that holds the flag takes decisions that may reserve, in the order they came.
            boolean carriesReserving = !reserving.isEmpty() && reservingInFlight.compareAndSet(false, true);
            List<Pending> batch = new ArrayList<>(Math.min(batchSize, queued.get()));
            if (carriesReserving) {
                take(reserving, batch);
            }
            take(queue, batch);
            if (batch.isEmpty()) {
                done(carriesReserving);
                continue;
            }
            if (breaker.state() == StoreCircuitBreaker.State.OPEN) {
                // The breaker opened while these waited: they fail now, as later decisions do.
                batch.forEach(pending -> pending.reply.completeExceptionally(breaker.rejection()));
                done(carriesReserving);
                continue;
            }
            InFlight sent = new InFlight(batch, carriesReserving, System.nanoTime(), silent);
            sends.add(sent);
            arm(sent.due - System.nanoTime());
            redis.sendFrom(() -> send(sent));
        }
    }

    /**
     * Has the sends in flight checked after {@code delay}, unless a check is due by then already.
     * One check at a time, for the earliest send, keeps the timer thread asleep while sends come
     * back in time; a send due earlier than the check scheduled (its decisions queued behind sends
     * Redis did not answer) schedules an earlier one instead.
     */
    private void arm(long delay) {
        long at = System.nanoTime() + Math.max(0, delay);
        long number;
        synchronized (timerLock) {
            if (checkArmed && at - checkAt >= 0) {
                return;
            }
            checkArmed = true;
            checkAt = at;
            number = ++checkNumber;
        }
        TIMER.schedule(() -> check(number), Math.max(0, delay), TimeUnit.NANOSECONDS);
    }

    private void check(long number) {
        long scheduledAt;
        synchronized (timerLock) {
            if (number != checkNumber) {
                // An earlier check replaced this one.
                return;
            }
            checkArmed = false;
            scheduledAt = checkAt;
        }
        long now = System.nanoTime();
        boolean cameLate = now - scheduledAt > STALL_NANOS;
        for (InFlight sent : sends) {
            sent.check(now, cameLate);
        }
        // Every send still in flight, those sent while this check ran too.
        long next = Long.MAX_VALUE;
        for (InFlight sent : sends) {
            if (!sent.over.get()) {
                next = Math.min(next, sent.due - now);
            }
        }
        if (next != Long.MAX_VALUE) {
            arm(next);
        }
    }

    /**
     * Whether the server of a key answers a read ({@code EXISTS}), which a server paused for
     * writes (a planned failover) still does, within a timeout. Where the client reads from
     * replicas, it asks one of them: then a master that stopped answering is given the grace
     * periods before its calls fail.
     */
    private CompletableFuture<Long> alive(String slotKey, long timeoutNanos) {
        return client.getKeys().countExistsAsync(slotKey).toCompletableFuture()
                .orTimeout(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /** Moves up to a batch's worth from a queue, refusing those that waited too long. */
    private void take(Queue<Pending> from, List<Pending> batch) {
        long now = System.nanoTime();
        Pending next;
        while (batch.size() < batchSize && (next = from.poll()) != null) {
            queued.decrementAndGet();
            if (now - next.queuedAt > maxQueueWaitNanos) {
                overload(next, "a decision waited " + TimeUnit.NANOSECONDS.toMillis(now - next.queuedAt)
                        + " ms to be sent");
            } else {
                batch.add(next);
            }
        }
    }

    private void requeue(Pending pending) {
        queued.incrementAndGet();
        (pending.call.reserves() ? reserving : queue).add(pending);
        drain();
    }

    private void overload(Pending pending, String why) {
        overloaded.increment();
        pending.reply.completeExceptionally(new StoreOverloadedException("Rate limit store overloaded: " + why,
                RedisCalls.RETRY_AFTER));
    }

    /** A send is over: replied, failed or timed out. */
    private void done(boolean carriedReserving) {
        if (carriedReserving) {
            reservingInFlight.set(false);
        }
        inFlight.decrementAndGet();
        drain();
    }

    /**
     * Sends the script calls of one send: one per hash slot in a cluster, else one. A cluster's
     * go pipelined, a batch per master: never one batch across masters, since Redisson fails
     * every command of a batch whose reply it has not read when one master's part fails, and a
     * call another master ran would be taken for one it did not run. Within a master's batch each
     * call gets that master's own answer.
     */
    private void send(InFlight sent) {
        if (sent.over.get()) {
            // Its decisions have had their answer: none is sent late.
            return;
        }
        long serverDeadline = serverClock.deadline(TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
        // NaN: no deadline, until the server's clock has been seen.
        double deadline = serverDeadline == ServerClock.NO_DEADLINE ? Double.NaN : serverDeadline;
        List<List<Pending>> groups = groups(sent.batch);
        List<CompletableFuture<?>> replies = new ArrayList<>(groups.size());
        if (groups.size() == 1) {
            ScriptCall call = ScriptCall.of(calls(groups.get(0)), deadline);
            replies.add(evalSha(sent, groups.get(0), call, attempt(call)));
        } else {
            Map<Object, List<List<Pending>>> byMaster = new LinkedHashMap<>();
            for (List<Pending> group : groups) {
                byMaster.computeIfAbsent(masterOf(group.get(0).call.slot()), master -> new ArrayList<>()).add(group);
            }
            for (List<List<Pending>> masterGroups : byMaster.values()) {
                RBatch pipeline = client.createBatch(batchOptions);
                RScriptAsync batched = pipeline.getScript(DecisionCodec.INSTANCE);
                List<CompletableFuture<byte[]>> attempts = new ArrayList<>(masterGroups.size());
                for (List<Pending> group : masterGroups) {
                    ScriptCall call = ScriptCall.of(calls(group), deadline);
                    CompletableFuture<byte[]> attempt = attempt(batched, call);
                    attempts.add(attempt);
                    replies.add(evalSha(sent, group, call, attempt));
                }
                pipeline.executeAsync().whenComplete((result, failure) -> {
                    if (failure != null) {
                        // A batch that fails as a whole (no connection) may leave its script calls unanswered.
                        attempts.forEach(attempt -> attempt.completeExceptionally(RedisCalls.unwrap(failure)));
                    }
                });
            }
        }
        CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).whenComplete((all, failure) -> sent.over());
    }

    /**
     * The master the client sends a slot's commands to, as Redisson's own routing has it now; the
     * slot itself where the client is not Redisson's own, which batches each slot apart.
     */
    private Object masterOf(int slot) {
        if (client instanceof Redisson redisson) {
            MasterSlaveEntry master = redisson.getCommandExecutor().getConnectionManager().getWriteEntry(slot);
            if (master != null) {
                return master;
            }
        }
        return slot;
    }

    private List<List<Pending>> groups(List<Pending> batch) {
        if (!cluster) {
            return List.of(batch);
        }
        Map<Integer, List<Pending>> bySlot = new LinkedHashMap<>();
        for (Pending pending : batch) {
            bySlot.computeIfAbsent(pending.call.slot(), slot -> new ArrayList<>()).add(pending);
        }
        return new ArrayList<>(bySlot.values());
    }

    private static List<Call> calls(List<Pending> group) {
        return group.stream().map(Pending::call).toList();
    }

    /**
     * One script call deciding a group's decisions, from its first attempt on. It is sent again,
     * while any of them waits, when Redis did not run it: when the server does not know the
     * script (after a restart, a failover or {@code SCRIPT FLUSH}), once it is loaded where the
     * keys live; when the keys' slot is moving or their node changing roles, or no connection
     * could be had or take it (the client replaces a node's connections after a failover),
     * shortly after.
     */
    private CompletableFuture<?> evalSha(InFlight sent, List<Pending> group, ScriptCall call,
                                         CompletableFuture<byte[]> attempt) {
        return again(sent, group, call, attempt).whenComplete((replied, failure) -> {
            if (failure != null) {
                group.forEach(pending -> pending.fail(RedisCalls.unwrap(failure)));
                return;
            }
            silent = false;
            List<byte[]> answers;
            try {
                answers = ScriptCall.replies(replied, calls(group));
            } catch (IllegalStateException e) {
                group.forEach(pending -> pending.fail(e));
                return;
            }
            for (int p = 0; p < group.size(); p++) {
                byte[] figures = answers.get(p);
                Pending pending = group.get(p);
                if (DecisionCodec.figure(figures, 0) == -1 && !pending.reply.isDone()) {
                    // Redis ran it after its deadline, and so did nothing, while its caller still waits: this JVM was
                    // slow to send it, or Redis held it back (a planned failover). It goes again with the next send.
                    serverClock.sample(DecisionCodec.figure(figures, 1));
                    requeue(pending);
                } else {
                    pending.answer(figures);
                }
            }
        });
    }

    /** An attempt's reply; when Redis did not run it, that of another attempt. */
    private CompletableFuture<byte[]> again(InFlight sent, List<Pending> group, ScriptCall call,
                                            CompletableFuture<byte[]> attempt) {
        return attempt.exceptionallyCompose(failure -> {
            Throwable cause = RedisCalls.unwrap(failure);
            boolean waiting = group.stream().anyMatch(pending -> !pending.reply.isDone());
            if (waiting && cause instanceof RedisNoScriptException) {
                return scripts.scriptLoadAsync(call.slotKey(), script).toCompletableFuture()
                        .thenCompose(loaded -> again(sent, group, call, attempt(call)));
            }
            if (waiting && (notRun(cause) || cause instanceof RedisConnectionException)) {
                // Redis turning it away says Redis is there; a connection that could not be had or could not take it
                // (the client is replacing a node's connections after a failover) says nothing.
                sent.redirected |= notRun(cause);
                CompletableFuture<byte[]> later = new CompletableFuture<>();
                TIMER.schedule(() -> again(sent, group, call, attempt(call)).whenComplete((replied, failed) -> {
                    if (failed != null) {
                        later.completeExceptionally(failed);
                    } else {
                        later.complete(replied);
                    }
                }), RESEND_MILLIS, TimeUnit.MILLISECONDS);
                return later;
            }
            return CompletableFuture.failedFuture(failure);
        });
    }

    /** Sends a script call once, on its own: its reply's bytes, or what it failed with. */
    private CompletableFuture<byte[]> attempt(ScriptCall call) {
        return attempt(scripts, call);
    }

    /** Sends a script call once, on its own or in a batch: its reply's bytes, or what it failed with. */
    private CompletableFuture<byte[]> attempt(RScriptAsync through, ScriptCall call) {
        CompletableFuture<byte[]> reply = new CompletableFuture<>();
        try {
            through.<byte[]>evalShaAsync(call.slotKey(), RScript.Mode.READ_WRITE, sha, RScript.ReturnType.VALUE,
                    call.keys(), call.arguments()).whenComplete((replied, failure) -> {
                        if (failure != null) {
                            reply.completeExceptionally(failure);
                        } else {
                            reply.complete(replied);
                        }
                    });
        } catch (RuntimeException e) {
            reply.completeExceptionally(e);
        }
        return reply;
    }

    /**
     * Whether Redis refused a script call without running it, for a moment: its keys' slot is
     * being moved between nodes ({@code TRYAGAIN}), the node is a replica now or loading its data,
     * or the cluster is settling after a failover (the client has not learnt yet of the master it
     * is sent to).
     */
    private static boolean notRun(Throwable failure) {
        return failure instanceof RedisTryAgainException || failure instanceof RedisNodeNotFoundException
                || failure instanceof RedisReadonlyException
                || failure instanceof RedisLoadingException || failure instanceof RedisClusterDownException
                || failure instanceof RedisMasterDownException;
    }

    /**
     * The keys and arguments of one {@code decide.lua} call deciding calls in the order given;
     * identical calls one after the other are sent once, with their number.
     *
     * @param keys      each call's keys in turn
     * @param arguments each call's id and figures in turn
     */
    record ScriptCall(List<Object> keys, Object[] arguments) {

        /**
         * The script call deciding {@code calls}.
         *
         * @param calls    the calls, in the order to decide them
         * @param deadline the server's time after which none of them is decided, or NaN for none
         * @return the script call
         */
        static ScriptCall of(List<Call> calls, double deadline) {
            List<Object> keys = new ArrayList<>();
            List<Object> arguments = new ArrayList<>();
            for (int first = 0; first < calls.size(); ) {
                Call call = calls.get(first);
                int same = 1;
                while (first + same < calls.size() && call.sameAs(calls.get(first + same))) {
                    same++;
                }
                keys.addAll(call.keys());
                arguments.add(call.arguments()[0]);
                byte[] figures = DecisionCodec.withFigure((byte[]) call.arguments()[1], 2, deadline);
                DecisionCodec.setFigure(figures, 4, same);
                arguments.add(figures);
                first += same;
            }
            return new ScriptCall(keys, arguments.toArray());
        }

        /** The key that decides which node of a cluster runs the script call. */
        String slotKey() {
            return keys.get(0).toString();
        }

        /**
         * Each call's reply, of the reply of a script call: results that each answer one call or
         * more in a row, identical calls admitted together (each has the cost fewer remaining
         * than the one before) or rejected alike.
         *
         * @param replies the script call's reply
         * @param calls   the calls it decided, in order
         * @return each call's figures, as {@link DecisionCodec#figure} reads them
         * @throws IllegalStateException when the results do not answer the calls one for one
         */
        static List<byte[]> replies(byte[] replies, List<Call> calls) {
            List<byte[]> figures = new ArrayList<>(calls.size());
            for (int at = 0; at + RESULT_BYTES <= replies.length; at += RESULT_BYTES) {
                byte[] result = Arrays.copyOfRange(replies, at, at + RESULT_BYTES);
                long run = DecisionCodec.figure(result, RUN);
                if (run < 1 || run > calls.size() - figures.size()) {
                    break;
                }
                figures.add(result);
                boolean admitted = DecisionCodec.figure(result, 0) == 1;
                long cost = DecisionCodec.figure((byte[]) calls.get(figures.size() - 1).arguments()[1], 1);
                for (int next = 1; next < run; next++) {
                    byte[] following = result.clone();
                    if (admitted) {
                        DecisionCodec.setFigure(following, 2, DecisionCodec.figure(result, 2) - next * cost);
                    }
                    figures.add(following);
                }
            }
            if (figures.size() != calls.size() || replies.length % RESULT_BYTES != 0) {
                throw new IllegalStateException("decide.lua answered " + figures.size() + " of " + calls.size()
                        + " calls with " + replies.length + " bytes");
            }
            return figures;
        }
    }

    /** A decision waiting for its reply. */
    private record Pending(Call call, Consumer<byte[]> late, CompletableFuture<byte[]> reply, long queuedAt) {

        void answer(byte[] figures) {
            if (!reply.complete(figures)) {
                late.accept(figures);
            }
        }

        void fail(Throwable failure) {
            reply.completeExceptionally(failure);
        }
    }

    /** One send: its decisions, and its deadline. */
    private final class InFlight {

        private final List<Pending> batch;
        private final boolean carriesReserving;
        private final long sentAt;
        /**
         * When the decisions' wait for Redis began: when it was sent; or, while Redis is silent,
         * when the first of them was queued, behind sends that got no answer.
         */
        private final long waitingSince;
        private final AtomicBoolean over = new AtomicBoolean();
        /** When it times out, in {@link System#nanoTime()}; later by a period for each grace. */
        private volatile long due;
        private volatile int graces;
        /** Whether its server has been asked whether it is alive, whether the read is out, and its answer. */
        private volatile boolean probed;
        private volatile boolean probing;
        /** Whether its server answered that read: Redis is there, only slow to run the send. */
        private volatile boolean alive;
        /** Whether that read failed or found no answer in time. */
        private volatile boolean probeFailed;
        /** Whether Redis refused a script call of it without running it since the last check. */
        private volatile boolean redirected;

        InFlight(List<Pending> batch, boolean carriesReserving, long sentAt, boolean redisSilent) {
            this.batch = batch;
            this.carriesReserving = carriesReserving;
            this.sentAt = sentAt;
            long since = sentAt;
            if (redisSilent) {
                for (Pending pending : batch) {
                    since = Math.min(since, pending.queuedAt);
                }
            }
            this.waitingSince = since;
            this.due = Math.min(sentAt + timeoutNanos / 2, since + capNanos);
        }

        /**
         * Times the send out if it is due, unless Redis is only slow to run it. Half the timeout
         * without a reply, the server of a decision still waiting is asked whether it is alive,
         * with a read (which a server paused for a planned failover still answers). Redis is known
         * to be there when the server answers it, or turned a script call away for a moment: then
         * the send gets another period past the timeout, up to {@link #MAX_GRACE_PERIODS}. Until
         * then, the send waits for the read's answer, or for this JVM when the check itself came
         * late or every core of the machine is busy (it may not have read the reply), but never
         * past {@link #capNanos} after it was sent, or queued behind sends Redis did not answer: a
         * server that stopped answering costs a caller no more than that.
         *
         * @return whether it is still in flight
         */
        boolean check(long now, boolean checkCameLate) {
            if (over.get()) {
                return false;
            }
            if (now - due < 0) {
                return true;
            }
            long cap = waitingSince + capNanos;
            if (!probed) {
                Pending waiting = batch.stream().filter(pending -> !pending.reply.isDone()).findFirst().orElse(null);
                if (waiting != null && redis.connected()) {
                    probed = true;
                    probe(waiting.call.slotKey(), cap - now);
                }
            }
            if (now - (sentAt + timeoutNanos) < 0 && now - cap < 0) {
                due = Math.min(sentAt + timeoutNanos, cap);
                return true;
            }
            boolean heard = alive || redirected;
            redirected = false;
            if (heard) {
                if (graces < MAX_GRACE_PERIODS) {
                    graces++;
                    due = now + timeoutNanos;
                    return true;
                }
            } else if (now - cap < 0 && (probing || !probeFailed && (checkCameLate || MachineLoad.saturated()))) {
                due = Math.min(now + timeoutNanos, cap);
                return true;
            }
            timeOut(now);
            return false;
        }

        /** Asks the server of {@code slotKey} whether it is alive, within {@code limit}. */
        private void probe(String slotKey, long limit) {
            probing = true;
            alive(slotKey, limit).whenComplete((answered, failure) -> TIMER.execute(() -> {
                probing = false;
                if (failure == null) {
                    alive = true;
                } else {
                    probeFailed = true;
                }
            }));
        }

        private void timeOut(long now) {
            if (over.get()) {
                return;
            }
            TimeoutException timeout = new TimeoutException("sent " + TimeUnit.NANOSECONDS.toMillis(now - sentAt)
                    + " ms ago");
            if (!alive) {
                silent = true;
            }
            batch.forEach(pending -> pending.fail(timeout));
            over();
        }

        /** The send is replied or timed out, whichever comes first: the next may go. */
        void over() {
            if (over.compareAndSet(false, true)) {
                sends.remove(this);
                done(carriesReserving);
            }
        }
    }

    private static ScheduledExecutorService timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "sluice-redis-timer");
            thread.setDaemon(true);
            return thread;
        });
        return timer;
    }

    /** The hash slot of a key's hash tag, as Redis Cluster computes it. */
    static int slot(String hashTag) {
        return CRC16.crc16(hashTag.getBytes(StandardCharsets.UTF_8)) & 16383;
    }
}
