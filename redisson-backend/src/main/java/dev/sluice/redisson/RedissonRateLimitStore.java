package dev.sluice.redisson;

import dev.sluice.CountSyncStore;
import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.OverloadPolicy;
import dev.sluice.RateLimitStore;
import dev.sluice.Reservation;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreOverloadedException;
import dev.sluice.StoreQueue;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.internal.Ago;
import dev.sluice.internal.LocalAdmissions;
import dev.sluice.internal.StoreKeys;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RKeys;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;

/**
 * The Redis store: every decision is one {@code EVALSHA} of a Lua script that decides all tiers
 * of the key atomically, for every algorithm, so any number of application instances share one
 * limit exactly. It works with whatever the given {@link RedissonClient} connects to: a single
 * server, sentinel, replicated or cluster.
 *
 * <pre class="code">
 * RateLimitStore store = RedissonRateLimitStore.builder(redisson).build();
 * </pre>
 *
 * <p><strong>Keys.</strong> Each tier of store key {@code k} (the limiter name and the caller's
 * key) lives in a hash at {@code sluice:{k}:<algorithm><window ms>}, a {@code SLIDING_LOG}
 * tier's log in a sorted set beside it at {@code sluice:{k}:sl<window ms>:log}; every tier
 * also keeps the key's latest time (so that time never runs backwards for it) and the end of
 * its block. The hash tag puts all of them in one cluster slot. A {@code k} that
 * is empty, longer than 128 characters, contains <code>{</code> or <code>}</code>, or starts
 * with {@code #}, is replaced by {@code #} and its SHA-256. Every key written expires once its state
 * no longer matters: at the end of its window, refill or block, on the server's clock. With
 * {@link Builder#clock(InstantSource)}, whose time may run slow or stand still, a state lasts as
 * long in real time, and at least ten minutes after its last change. With a
 * {@linkplain Builder#keyHashSecret(byte[]) key hash secret}, {@code k} is always replaced by
 * its HMAC-SHA-256, so that no caller's key reaches Redis in clear. {@link #reset} deletes one
 * key's state in one round trip.
 *
 * <p><strong>Time.</strong> By default the script reads the Redis server's {@code TIME}, so
 * instances with skewed clocks agree. With {@link Builder#clock(InstantSource)} the client's
 * time is sent instead (tests use this to move time). Decisions follow that time, never key
 * expiry.
 *
 * <p><strong>Scripts.</strong> The script is run by its SHA-1; when the server does not know it
 * (after a restart, a failover or {@code SCRIPT FLUSH}), it is loaded and the call repeated,
 * without the caller noticing.
 *
 * <p><strong>Outages.</strong> A decision that has no answer within the store's
 * {@linkplain Builder#timeout(Duration) timeout} (100 ms by default), whatever the client's own
 * timeouts, fails with {@link StoreUnavailableException}, and its limiter applies its failure
 * policy. A decision is sent once and never retried: the client's retry settings are ignored,
 * so a call that times out is never counted twice. It carries its caller's deadline in the
 * server's time, and the script refuses it past that deadline, so a call that waited behind a
 * paused server while its caller gave up is not counted either; one whose answer came too late
 * for its caller is taken back. After
 * repeated failures the store's {@linkplain Builder#circuitBreaker(StoreCircuitBreaker) circuit
 * breaker} stops sending calls for a while, so an outage costs callers nothing but the first few
 * timeouts. The store does not need Redis to be up when it is built, and works with a client
 * created with {@code setLazyInitialization(true)} without blocking callers while it connects.
 *
 * <p><strong>Giving back.</strong> {@link #giveBack} gives back the permits of an admitted call
 * in one script call, sent at once within the store's timeout and through its circuit breaker.
 * The call is taken to have been admitted {@code ago} before the server's {@code TIME} (or the
 * client's clock, with {@link Builder#clock(InstantSource)}). A sliding log drops an entry of the
 * call's cost admitted no later than that, the newest such among its 1,024 newest entries that
 * still count; a tier whose state Redis no longer holds, or whose state was back to full since the
 * call, gives nothing back.
 *
 * <p><strong>Pausing and recounting.</strong> {@link #pause} and {@link #recount} are one script
 * call each, sent as a give-back is. A pause is a block that every tier's state keeps, ending the
 * pause's length after the server's {@code TIME}; tiers without state get a fresh one that lives
 * until the pause ends. A recount gives the call's entry in each sliding log, the one a give-back
 * would drop, the server's {@code TIME} as its score; a call without sliding-log tiers is not
 * sent.
 *
 * <p><strong>Local counting.</strong> As a {@link CountSyncStore} it takes the counts that
 * {@link dev.sluice.LocalSyncRateLimitStore} instances made locally, one script call per key and
 * sync, into the same window counters its decisions use.
 */
public final class RedissonRateLimitStore implements CountSyncStore {

    static final String SCRIPT = script("decide.lua");
    static final String SCRIPT_SHA = sha1(SCRIPT);
    private static final String GIVE_BACK_SCRIPT = script("give-back.lua");
    private static final String PAUSE_SCRIPT = script("pause.lua");
    private static final String SYNC_SCRIPT = script("sync.lua");
    private static final String RENEW_SCRIPT = script("renew.lua");
    private static final Set<Algorithm> ALGORITHMS = Collections.unmodifiableSet(EnumSet.allOf(Algorithm.class));
    /** The id of a call without sliding-log tiers, which need none. */
    private static final byte[] NO_ID = {};
    private static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);

    private final RScript scripts;
    private final ScriptPipeline pipeline;
    private final OverloadPolicy onOverload;
    private volatile @Nullable InMemoryRateLimitStore overloadStore;
    /** The calls the overload store admitted: their permits go back to it, not to Redis. */
    private final LocalAdmissions overloadAdmissions;
    private final RKeys redisKeys;
    private final String keyPrefix;
    private final @Nullable KeyHasher keyHasher;
    private final @Nullable InstantSource clock;
    private final Executor executor;
    private final StoreCircuitBreaker breaker;
    private final RedisCalls redis;
    private final ServerClock serverClock = ServerClock.monotonic();
    private final long timeoutMillis;
    private final String instanceId = UUID.randomUUID().toString();
    private final AtomicLong calls = new AtomicLong();
    private final Leases leases;

    private RedissonRateLimitStore(Builder builder) {
        // One attempt per decision, whatever the client's retry settings: a retried script runs twice. Redisson
        // waits for a late reply long after the caller gave up, so that what it counted can be taken back.
        this.scripts = builder.client.getScript(OptionalOptions.defaults().codec(DecisionCodec.INSTANCE)
                .timeout(RedisCalls.LATE_REPLIES).retryAttempts(0));
        this.redisKeys = builder.client.getKeys();
        this.keyPrefix = builder.keyPrefix;
        this.keyHasher = builder.keyHasher;
        this.clock = builder.clock;
        this.executor = builder.executor;
        this.breaker = RedisCalls.breaker(builder.breaker, builder.timeout, RedissonRateLimitStore.class.getSimpleName());
        this.redis = new RedisCalls(builder.timeout, breaker);
        this.timeoutMillis = builder.timeout.toMillis();
        this.pipeline = new ScriptPipeline(builder.client, scripts, SCRIPT, SCRIPT_SHA, breaker, serverClock, redis,
                new ScriptPipeline.Settings(builder.batchSize, builder.maxQueued, builder.maxQueueWait, builder.timeout));
        this.onOverload = builder.onOverload;
        this.leases = new Leases(this::renew, builder.client.getConfig().isClusterConfig(), System::nanoTime);
        this.overloadAdmissions = new LocalAdmissions(clock != null ? clock : InstantSource.system());
        // Connect and load the script now, so that the first decisions wait for neither.
        warmUp();
    }

    /**
     * Starts a store definition.
     *
     * @param client the Redisson client to run scripts with; its codec does not matter
     * @return a builder
     */
    public static Builder builder(RedissonClient client) {
        return new Builder(client);
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        RateLimitStore.check(this, key, tiers, cost);
        try {
            Call call = call(key, tiers, cost, 0);
            return decide(call, reply -> held(key, tiers, cost, call, decision(reply)));
        } catch (StoreOverloadedException e) {
            return admittedLocally(key, cost, overloadStore(e).tryAcquire(key, tiers, cost));
        }
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        return decideAsync(() -> {
            RateLimitStore.check(this, key, tiers, cost);
            return call(key, tiers, cost, 0);
        }, (call, reply) -> held(key, tiers, cost, call, decision(reply)), local -> local.tryAcquireAsync(key, tiers, cost)
                .thenApply(decision -> admittedLocally(key, cost, decision)));
    }

    /**
     * Reserves the permits of calls whose tiers are all token buckets, in the same script call
     * and round trip as any decision: a caller that waits for its permit asks Redis once.
     */
    @Override
    public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
        RateLimitStore.check(this, key, tiers, cost, maxWait);
        try {
            Call call = call(key, tiers, cost, maxWait.toMillis());
            return decide(call, reply -> held(key, tiers, cost, call, reservation(reply)));
        } catch (StoreOverloadedException e) {
            Reservation reservation = overloadStore(e).reserve(key, tiers, cost, maxWait);
            admittedLocally(key, cost, reservation.decision());
            return reservation;
        }
    }

    @Override
    public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
        return decideAsync(() -> {
            RateLimitStore.check(this, key, tiers, cost, maxWait);
            return call(key, tiers, cost, maxWait.toMillis());
        }, (call, reply) -> held(key, tiers, cost, call, reservation(reply)), local -> local.reserveAsync(key, tiers, cost, maxWait)
                .thenApply(reservation -> {
                    admittedLocally(key, cost, reservation.decision());
                    return reservation;
                }));
    }

    /**
     * Queues a call, and waits for what {@code answer} reads from its reply: within the timeout
     * once it is sent, and within the queue's own bounds before.
     */
    private <T> T decide(Call call, Function<byte[], T> answer) {
        return redis.sentAndWait(call.keys, () -> pipeline.send(call, reply -> takeBack(call, reply)), answer);
    }

    /**
     * {@link #decide} without blocking; a request {@code call} refuses fails the stage, and one
     * the queue cannot hold is decided by {@code local} under {@link OverloadPolicy#LOCAL_FALLBACK}.
     */
    private <T> CompletionStage<T> decideAsync(Supplier<Call> call, BiFunction<Call, byte[], T> answer,
                                               Function<RateLimitStore, CompletionStage<T>> local) {
        Call checked;
        try {
            checked = call.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<T> decided = redis.sent(checked.keys,
                () -> pipeline.send(checked, reply -> takeBack(checked, reply)), reply -> answer.apply(checked, reply));
        return RedisCalls.completeOn(executor, decided.exceptionallyCompose(failure -> {
            Throwable cause = RedisCalls.unwrap(failure);
            return cause instanceof StoreOverloadedException overloaded
                    ? local.apply(overloadStore(overloaded)).toCompletableFuture()
                    : CompletableFuture.failedFuture(cause);
        }));
    }

    /**
     * Keeps the leases of the permits an admitted call holds in concurrency tiers, which the
     * store renews until the call releases them; its caller has the answer.
     */
    private <T> T held(String key, List<Tier> tiers, long cost, Call call, T answer) {
        Decision decision = answer instanceof Reservation reservation ? reservation.decision() : (Decision) answer;
        if (!decision.allowed()) {
            return answer;
        }
        int logs = 0;
        for (int i = 0; i < tiers.size(); i++) {
            Tier tier = tiers.get(i);
            if (tier.algorithm() == Algorithm.SLIDING_LOG) {
                logs++;
            } else if (tier.isConcurrency()) {
                String log = call.keys.get(tiers.size() + logs++).toString();
                leases.held(key, new Leases.Lease((byte[]) call.arguments[0], cost, call.keys.get(i).toString(), log,
                        tier.windowMillis(), call.slot(), System.nanoTime()));
            }
        }
        return answer;
    }

    /** Renews leases of one hash slot (of any, outside a cluster) in one script call: renew.lua. */
    private CompletableFuture<?> renew(List<Leases.Lease> due) {
        List<Object> keys = new ArrayList<>(2 * due.size());
        Object[] arguments = new Object[1 + 2 * due.size()];
        arguments[0] = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)
                .putDouble(clock == null ? Double.NaN : clock.millis()).array();
        for (int l = 0; l < due.size(); l++) {
            Leases.Lease lease = due.get(l);
            keys.add(lease.state);
            keys.add(lease.log);
            arguments[1 + l] = (new String(lease.id, StandardCharsets.US_ASCII) + ':' + lease.cost)
                    .getBytes(StandardCharsets.US_ASCII);
            arguments[1 + due.size() + l] = Long.toString(lease.leaseMillis).getBytes(StandardCharsets.US_ASCII);
        }
        return redis.call(keys, () -> send(RENEW_SCRIPT, keys, arguments), renewed -> { }, renewed -> renewed);
    }

    /** Remembers a call the overload store admitted, whose permits go back there. */
    private Decision admittedLocally(String key, long cost, Decision decision) {
        if (decision.allowed()) {
            overloadAdmissions.admitted(key, cost);
        }
        return decision;
    }

    /**
     * The overload store, when it admitted the call (the queue was full): its permits go back
     * there, never to Redis, which did not count it. {@code null} for a call Redis admitted.
     */
    private @Nullable RateLimitStore admittedBy(String key, long cost, Duration ago) {
        InMemoryRateLimitStore local = overloadStore;
        return local != null && overloadAdmissions.taken(key, cost, ago) ? local : null;
    }

    /**
     * Where a call the queue cannot hold is decided: an in-memory store of this JVM under
     * {@link OverloadPolicy#LOCAL_FALLBACK}.
     *
     * @throws StoreOverloadedException {@code overloaded}, under {@link OverloadPolicy#REJECT}
     */
    private RateLimitStore overloadStore(StoreOverloadedException overloaded) {
        if (onOverload == OverloadPolicy.REJECT) {
            throw overloaded;
        }
        InMemoryRateLimitStore local = overloadStore;
        if (local == null) {
            synchronized (this) {
                local = overloadStore;
                if (local == null) {
                    local = InMemoryRateLimitStore.builder().build();
                    overloadStore = local;
                }
            }
        }
        return local;
    }

    @Override
    public boolean reserves(Tier tier) {
        return tier.algorithm() == Algorithm.TOKEN_BUCKET;
    }

    /**
     * Adds an instance's local counts to the key's window counters, and takes off what it gave
     * back, in one script call, within the store's timeout and through its circuit breaker. A sync
     * whose answer is lost may be sent again: the script adds and takes off each instance's
     * sequence once. The key comes bounded, as {@link StoreKeys#bounded} keeps keys, and counts
     * where the key it was bounded from does.
     */
    @Override
    public CompletionStage<Totals> sync(String key, List<Tier> tiers, Sync sync) {
        List<Object> keys;
        Object[] arguments;
        try {
            RateLimitStore.check(this, key, tiers);
            if (sync.counted().size() != tiers.size()) {
                throw new IllegalArgumentException("a sync needs one count per tier: " + sync.counted().size()
                        + " for " + tiers.size() + " tiers");
            }
            keys = keysTagged(boundedHashTag(key, keyHasher), tiers);
            arguments = new Object[3 + 7 * tiers.size()];
            arguments[0] = clock == null ? "" : clock.millis();
            arguments[1] = sync.instance();
            arguments[2] = sync.sequence();
            int i = 3;
            for (int t = 0; t < tiers.size(); t++) {
                Tier tier = tiers.get(t);
                if (tier.algorithm() != Algorithm.FIXED_WINDOW && tier.algorithm() != Algorithm.SLIDING_WINDOW) {
                    throw new IllegalArgumentException("only window tiers are synced, not " + tier);
                }
                WindowCounts counted = sync.counted().get(t);
                WindowCounts givenBack = sync.givenBack().isEmpty() ? null : sync.givenBack().get(t);
                arguments[i++] = code(tier);
                arguments[i++] = tier.windowMillis();
                arguments[i++] = counted.windowStart();
                arguments[i++] = counted.current();
                arguments[i++] = counted.previous();
                arguments[i++] = givenBack == null ? 0 : givenBack.current();
                arguments[i++] = givenBack == null ? 0 : givenBack.previous();
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        String slotKey = keys.get(0).toString();
        return RedisCalls.completeOn(executor, redis.call(keys,
                () -> scripts.<List<Object>>evalAsync(slotKey, RScript.Mode.READ_WRITE, SYNC_SCRIPT,
                        RScript.ReturnType.LIST, keys, arguments).toCompletableFuture(),
                reply -> { }, RedissonRateLimitStore::totals));
    }

    private static Totals totals(List<Object> reply) {
        List<WindowCounts> counts = new ArrayList<>(reply.size() / 3);
        for (int i = 1; i + 2 < reply.size(); i += 3) {
            counts.add(new WindowCounts((Long) reply.get(i), (Long) reply.get(i + 1), (Long) reply.get(i + 2)));
        }
        return new Totals((Long) reply.get(0), counts);
    }

    /**
     * Gives back the permits of an admitted call in one script call (see
     * {@link RateLimitStore#giveBack} and the class description), sent at once rather than queued
     * with decisions, within the store's timeout and through its circuit breaker. One that times
     * out may still be done, once: a give-back is never sent twice.
     */
    @Override
    public void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
        RateLimitStore.check(this, key, tiers, cost);
        RateLimitStore admittedBy = admittedBy(key, cost, ago);
        if (admittedBy != null) {
            admittedBy.giveBack(key, tiers, cost, ago);
            return;
        }
        List<Object> keys = keys(key, tiers);
        Object[] arguments = giveBackArguments(key, tiers, cost, Ago.millis(ago));
        redis.callAndWait(keys, () -> send(GIVE_BACK_SCRIPT, keys, arguments), given -> { }, given -> null);
    }

    @Override
    public CompletionStage<Void> giveBackAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        List<Object> keys;
        Object[] arguments;
        try {
            RateLimitStore.check(this, key, tiers, cost);
            RateLimitStore admittedBy = admittedBy(key, cost, ago);
            if (admittedBy != null) {
                return admittedBy.giveBackAsync(key, tiers, cost, ago);
            }
            keys = keys(key, tiers);
            arguments = giveBackArguments(key, tiers, cost, Ago.millis(ago));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return RedisCalls.completeOn(executor, redis.<Long, Void>call(keys, () -> send(GIVE_BACK_SCRIPT, keys, arguments),
                given -> { }, given -> null));
    }

    /** Every algorithm, {@link Algorithm#CONCURRENCY} included. */
    @Override
    public Set<Algorithm> supportedAlgorithms() {
        return ALGORITHMS;
    }

    /** Every tier this store supports: it gives back the permits of every algorithm. */
    @Override
    public boolean givesBack(Tier tier) {
        return supports(tier);
    }

    /**
     * Pauses a key in one script call (see {@link RateLimitStore#pause}), sent at once rather than
     * queued with decisions, within the store's timeout and through its circuit breaker: every
     * tier's state keeps a block of the key that ends {@code duration} after the server's
     * {@code TIME} (or the client's clock, with {@link Builder#clock(InstantSource)}), unless a
     * block it holds ends later, and lives until then. A tier without state gets a fresh one.
     */
    @Override
    public void pause(String key, List<Tier> tiers, Duration duration) {
        RateLimitStore.check(this, key, tiers, duration);
        if (duration.isNegative() || duration.isZero()) {
            return;
        }
        pausedLocally(key, tiers, duration);
        List<Object> keys = keys(key, tiers);
        Object[] arguments = pauseArguments(tiers, duration);
        redis.callAndWait(keys, () -> send(PAUSE_SCRIPT, keys, arguments), paused -> { }, paused -> null);
    }

    /** The overload store, if calls have needed it, decides whenever the queue is full: it holds pauses too. */
    private void pausedLocally(String key, List<Tier> tiers, Duration duration) {
        InMemoryRateLimitStore local = overloadStore;
        if (local != null) {
            local.pause(key, tiers, duration);
        }
    }

    @Override
    public CompletionStage<Void> pauseAsync(String key, List<Tier> tiers, Duration duration) {
        List<Object> keys;
        Object[] arguments;
        try {
            RateLimitStore.check(this, key, tiers, duration);
            if (duration.isNegative() || duration.isZero()) {
                return CompletableFuture.completedFuture(null);
            }
            pausedLocally(key, tiers, duration);
            keys = keys(key, tiers);
            arguments = pauseArguments(tiers, duration);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return RedisCalls.completeOn(executor, redis.<Long, Void>call(keys, () -> send(PAUSE_SCRIPT, keys, arguments),
                paused -> { }, paused -> null));
    }

    /** Every tier this store supports: a pause is a block, which every tier's state keeps. */
    @Override
    public boolean pauses(Tier tier) {
        return supports(tier);
    }

    /** The arguments of pause.lua: the pause in whole milliseconds, a part of one counted whole. */
    private Object[] pauseArguments(List<Tier> tiers, Duration duration) {
        long millis = duration.toMillis() + (duration.getNano() % 1_000_000 == 0 ? 0 : 1);
        byte[] figures = figures(tiers, 1, 0);
        DecisionCodec.setFigure(figures, 1, millis);
        return new Object[] {figures};
    }

    /**
     * Recounts an admitted call in one script call (see {@link RateLimitStore#recount}), sent as
     * a give-back is: each sliding log gives the call's entry, the one a give-back would drop, the
     * server's {@code TIME} (or the client's clock) as its time. Other tiers are not changed.
     */
    @Override
    public void recount(String key, List<Tier> tiers, long cost, Duration ago) {
        RateLimitStore.check(this, key, tiers, cost);
        long agoMillis = Ago.millis(ago);
        RateLimitStore admittedBy = admittedBy(key, cost, ago);
        if (admittedBy != null) {
            admittedBy.recount(key, tiers, cost, ago);
            return;
        }
        if (!logged(tiers)) {
            return;
        }
        List<Object> keys = keys(key, tiers);
        Object[] arguments = recountArguments(tiers, cost, agoMillis);
        redis.callAndWait(keys, () -> send(GIVE_BACK_SCRIPT, keys, arguments), moved -> { }, moved -> null);
    }

    @Override
    public CompletionStage<Void> recountAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        List<Object> keys;
        Object[] arguments;
        try {
            RateLimitStore.check(this, key, tiers, cost);
            long agoMillis = Ago.millis(ago);
            RateLimitStore admittedBy = admittedBy(key, cost, ago);
            if (admittedBy != null) {
                return admittedBy.recountAsync(key, tiers, cost, ago);
            }
            if (!logged(tiers)) {
                return CompletableFuture.completedFuture(null);
            }
            keys = keys(key, tiers);
            arguments = recountArguments(tiers, cost, agoMillis);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return RedisCalls.completeOn(executor, redis.<Long, Void>call(keys,
                () -> send(GIVE_BACK_SCRIPT, keys, arguments), moved -> { }, moved -> null));
    }

    /** Every tier this store supports, though only a sliding log changes. */
    @Override
    public boolean recounts(Tier tier) {
        return supports(tier);
    }

    private CompletableFuture<Long> send(String script, List<Object> keys, Object[] arguments) {
        return scripts.<Long>evalAsync(keys.get(0).toString(), RScript.Mode.READ_WRITE, script,
                RScript.ReturnType.LONG, keys, arguments).toCompletableFuture();
    }

    /**
     * The arguments of give-back.lua for a call admitted {@code agoMillis} ago. Its id is known
     * when it holds permits in a concurrency tier: that of its own lease, the one this store took
     * closest to then, which it stops renewing. A call whose lease this store does not hold (it
     * was released already) gives no permit of such a tier back.
     */
    private Object[] giveBackArguments(String key, List<Tier> tiers, long cost, long agoMillis) {
        byte[] id = tiers.stream().anyMatch(Tier::isConcurrency)
                ? leases.release(key, cost, TimeUnit.MILLISECONDS.toNanos(agoMillis)) : null;
        return giveBackArguments(id != null ? id : NO_ID, tiers, cost, agoMillis);
    }

    /** The arguments of give-back.lua for a call of this id ({@link #NO_ID}: not known) admitted {@code agoMillis} ago. */
    private Object[] giveBackArguments(byte[] id, List<Tier> tiers, long cost, long agoMillis) {
        byte[] figures = figures(tiers, cost, 0);
        DecisionCodec.setFigure(figures, 2, Double.NaN);
        DecisionCodec.setFigure(figures, 3, agoMillis);
        DecisionCodec.setFigure(figures, 4, 0);
        return new Object[] {id, figures};
    }

    /** The arguments of give-back.lua recounting a call admitted {@code agoMillis} ago. */
    private Object[] recountArguments(List<Tier> tiers, long cost, long agoMillis) {
        Object[] arguments = giveBackArguments(NO_ID, tiers, cost, agoMillis);
        DecisionCodec.setFigure((byte[]) arguments[1], 4, 1);
        return arguments;
    }

    private static boolean logged(List<Tier> tiers) {
        for (Tier tier : tiers) {
            if (tier.algorithm() == Algorithm.SLIDING_LOG || tier.isConcurrency()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Deletes the key's state and the state of each of {@code tiers} in one {@code DEL}: all of
     * them share one hash tag, so one node of a cluster holds them. Sent as decisions are, within
     * the store's timeout and through its circuit breaker.
     */
    @Override
    public void reset(String key, List<Tier> tiers) {
        RateLimitStore.check(this, key, tiers);
        List<Object> keys = keys(key, tiers);
        String[] names = keys.stream().map(Object::toString).toArray(String[]::new);
        redis.callAndWait(keys, () -> redisKeys.deleteAsync(names).toCompletableFuture(), deleted -> { },
                deleted -> deleted);
    }

    /**
     * Deletes every key under this store's prefix, on every node, found with {@code SCAN}: for
     * tests only, never on a Redis serving production traffic: it scans the whole keyspace. It is
     * not part of {@link dev.sluice.RateLimitStore}, so that no code holding a store can call it
     * by mistake. It waits as long as the client's own timeouts allow, outside the circuit breaker.
     */
    public void clear() {
        redisKeys.deleteByPattern(keyPattern(keyPrefix));
    }

    /** A {@code SCAN} pattern matching every key under {@code keyPrefix}, and no other prefix's. */
    static String keyPattern(String keyPrefix) {
        return keyPrefix.replaceAll("[*?\\\\\\[\\]]", "\\\\$0") + ":{*";
    }

    /**
     * Connects to Redis and loads the script now, in the background, so that the first
     * decisions wait for neither. Optional, and it never blocks: decisions work whether or not
     * it was called or succeeded. The Spring Boot starter calls it when the application starts.
     *
     * @return a stage completing once done, or failing with {@link StoreUnavailableException}
     *         when Redis cannot be reached
     */
    public CompletionStage<Void> warmUp() {
        return redis.warmUp(() -> scripts.scriptLoadAsync(SCRIPT).toCompletableFuture());
    }

    @Override
    public Optional<StoreCircuitBreaker> circuitBreaker() {
        return Optional.of(breaker);
    }

    /** The queue decisions wait in to be sent, many in one script call. */
    @Override
    public Optional<StoreQueue> queue() {
        return Optional.of(pipeline);
    }

    /**
     * Takes back a call the script admitted after its caller had given up, so that the store
     * counts exactly the admissions callers received: give-back.lua with the time the call was
     * decided at and its id. Should this fail too, the call stays counted: the strict side.
     */
    CompletableFuture<?> takeBack(Call call, byte[] reply) {
        if (DecisionCodec.figure(reply, 0) != 1) {
            return CompletableFuture.completedFuture(null);
        }
        byte[] figures = ((byte[]) call.arguments[1]).clone();
        DecisionCodec.setFigure(figures, 0, clock == null ? Double.NaN : clock.millis());
        DecisionCodec.setFigure(figures, 2, DecisionCodec.figure(reply, 6));
        DecisionCodec.setFigure(figures, 3, 0);
        // Gives back, where decide.lua has the number of calls.
        DecisionCodec.setFigure(figures, 4, 0);
        return scripts.evalAsync(call.slotKey(), RScript.Mode.READ_WRITE, GIVE_BACK_SCRIPT, RScript.ReturnType.LONG,
                call.keys, new Object[] {call.arguments[0], figures}).toCompletableFuture();
    }

    /**
     * One script call.
     *
     * @param keys      its Redis keys
     * @param arguments the call's id and its figures, as decide.lua reads them
     * @param reserves  whether a call that does not fit now may be reserved, which makes the
     *                  order calls reach Redis in the order their callers are served in
     */
    record Call(List<Object> keys, Object[] arguments, boolean reserves) {

        /** The key that decides which node of a cluster runs the call. */
        String slotKey() {
            return keys.get(0).toString();
        }

        /**
         * Whether another call is this one again: the same keys and figures, and no sliding log
         * entries, which each call names with its own id.
         */
        boolean sameAs(Call other) {
            return ((byte[]) arguments[0]).length == 0 && ((byte[]) other.arguments[0]).length == 0
                    && Arrays.equals((byte[]) arguments[1], (byte[]) other.arguments[1]) && keys.equals(other.keys);
        }

        /** The cluster hash slot of its keys, which share one hash tag. */
        int slot() {
            String key = slotKey();
            int open = key.indexOf('{');
            return ScriptPipeline.slot(key.substring(open + 1, key.indexOf('}', open + 1)));
        }
    }

    Call call(String key, List<Tier> tiers, long cost, long maxWaitMillis) {
        // Only a sliding log's entries are named by the call.
        byte[] id = logged(tiers) ? (instanceId + ':' + sequenceText(calls.incrementAndGet()))
                .getBytes(StandardCharsets.US_ASCII) : NO_ID;
        return new Call(keys(key, tiers), new Object[] {id, figures(tiers, cost, maxWaitMillis)}, maxWaitMillis > 0);
    }

    /** A call's figures, as decide.lua reads them; NaN: the server's time; the deadline, set when the call is sent; one call. */
    private byte[] figures(List<Tier> tiers, long cost, long maxWaitMillis) {
        ByteBuffer figures = ByteBuffer.allocate(40 + 34 * tiers.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putDouble(clock == null ? Double.NaN : clock.millis())
                .putDouble(cost)
                .putDouble(Double.NaN)
                .putDouble(maxWaitMillis)
                .putDouble(1);
        for (Tier tier : tiers) {
            String code = code(tier);
            figures.put((byte) code.charAt(0)).put((byte) code.charAt(1))
                    .putDouble(tier.limit())
                    .putDouble(tier.windowMillis())
                    .putDouble(tier.countRejected() ? 1 : 0)
                    .putDouble(tier.blockFor().toMillis());
        }
        return figures.array();
    }

    /**
     * A call's number as its id ends: its digits in base 36 after a letter saying how many there
     * are, so that ids sort as their numbers do. A sorted set orders the entries of one
     * millisecond by id: a sliding log then drops the calls of one instance, and gives back its
     * calls, in the order they came, as the in-memory store does.
     */
    static String sequenceText(long number) {
        String digits = Long.toString(number, 36);
        return (char) ('a' + digits.length()) + digits;
    }

    /** The Redis keys of a store key: each tier's state, then the log of each {@code SLIDING_LOG} tier. */
    private List<Object> keys(String key, List<Tier> tiers) {
        return keysTagged(hashTag(key, keyHasher), tiers);
    }

    /** The Redis keys of the store key whose hash tag is {@code tag}. */
    private List<Object> keysTagged(String tag, List<Tier> tiers) {
        List<Object> keys = new ArrayList<>(tiers.size() + 1);
        for (Tier tier : tiers) {
            // Every concurrency tier of a key counts the same permits, whatever its lease.
            keys.add(keyPrefix + ":{" + tag + "}:" + code(tier) + (tier.isConcurrency() ? "" : tier.windowMillis()));
        }
        for (int i = 0; i < tiers.size(); i++) {
            if (tiers.get(i).algorithm() == Algorithm.SLIDING_LOG || tiers.get(i).isConcurrency()) {
                keys.add(keys.get(i) + ":log");
            }
        }
        return keys;
    }

    /**
     * The store key as it appears between braces: the {@linkplain #boundedHashTag hash tag} of
     * the key {@linkplain StoreKeys#bounded bounded} as every store keeps keys.
     */
    static String hashTag(String key, @Nullable KeyHasher keyHasher) {
        return boundedHashTag(StoreKeys.bounded(key), keyHasher);
    }

    /** {@link #hashTag(String, KeyHasher)} without a key hash secret. */
    static String hashTag(String key) {
        return hashTag(key, null);
    }

    /**
     * The hash tag of a key bounded already, as local counting syncs keys: its HMAC when the
     * store has a key hash secret; otherwise the key, or its digest when empty or holding a
     * brace, which would move the hash tag. A digest, which the bounded form of a long key is,
     * stays as it is: a key and its bounded form have one hash tag.
     */
    static String boundedHashTag(String bounded, @Nullable KeyHasher keyHasher) {
        if (keyHasher != null) {
            return keyHasher.hash(bounded);
        }
        return bounded.isEmpty() || bounded.indexOf('{') >= 0 || bounded.indexOf('}') >= 0
                ? StoreKeys.digest(bounded) : bounded;
    }

    /** A key prefix: not blank, and free of braces, which would move the hash tag. */
    static String checkKeyPrefix(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        if (keyPrefix.isBlank() || keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix must be non-blank and free of braces, was '" + keyPrefix + "'");
        }
        return keyPrefix;
    }

    private static String code(Tier tier) {
        return switch (tier.algorithm()) {
            case FIXED_WINDOW -> "fw";
            case SLIDING_WINDOW -> "sw";
            case SLIDING_LOG -> "sl";
            case TOKEN_BUCKET -> "tb";
            case CONCURRENCY -> "cc";
        };
    }

    Reservation reservation(byte[] reply) {
        return new Reservation(decision(reply), Duration.ofMillis(DecisionCodec.figure(reply, 8)));
    }

    Decision decision(byte[] reply) {
        long allowed = DecisionCodec.figure(reply, 0);
        if (allowed == -1) {
            serverClock.sample(DecisionCodec.figure(reply, 1));
            throw new StoreUnavailableException("Redis reached the call after its deadline (" + timeoutMillis
                    + " ms after it was sent) and did not count it", RedisCalls.RETRY_AFTER);
        }
        serverClock.sample(DecisionCodec.figure(reply, 5));
        // A window of -1: the binding tier is a concurrency tier, which has none.
        long window = DecisionCodec.figure(reply, 7);
        return new Decision(allowed == 1, DecisionCodec.figure(reply, 1), DecisionCodec.figure(reply, 2),
                Duration.ofMillis(DecisionCodec.figure(reply, 3)), Duration.ofMillis(DecisionCodec.figure(reply, 4)),
                Duration.ofMillis(Math.max(0, window)), window < 0);
    }

    /** A script as sent: {@code expiry.lua}, which every script reads, then the script's own text. */
    private static String script(String name) {
        return resource("expiry.lua") + resource(name);
    }

    private static String resource(String name) {
        try (InputStream in = Objects.requireNonNull(RedissonRateLimitStore.class.getResourceAsStream(name), name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Configures a {@link RedissonRateLimitStore}. Not thread-safe; build once. */
    public static final class Builder {

        private final RedissonClient client;
        private String keyPrefix = "sluice";
        private @Nullable InstantSource clock;
        private Executor executor = RedisCalls.COMPLETIONS;
        private Duration timeout = DEFAULT_TIMEOUT;
        private @Nullable StoreCircuitBreaker breaker;
        private @Nullable KeyHasher keyHasher;
        private int batchSize = ScriptPipeline.DEFAULT_BATCH_SIZE;
        private int maxQueued = ScriptPipeline.DEFAULT_MAX_QUEUED;
        private Duration maxQueueWait = ScriptPipeline.DEFAULT_MAX_QUEUE_WAIT;
        private OverloadPolicy onOverload = OverloadPolicy.REJECT;

        private Builder(RedissonClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * The first part of every key, so that several applications can share a Redis.
         *
         * @param keyPrefix not blank, without braces; default {@code "sluice"}
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = checkKeyPrefix(keyPrefix);
            return this;
        }

        /**
         * Keep keys in Redis as their HMAC-SHA-256 under this secret, so that what callers are
         * counted by (phone numbers, e-mail addresses, IP addresses) never reaches Redis in clear:
         * {@code sluice:{<64 hex digits>}:sw60000}. Decisions and
         * {@link RedissonRateLimitStore#reset reset} work as before, since the same key always
         * gives the same hash; but browsing Redis no longer shows whose counts a key holds, nor
         * the limiter's name.
         *
         * <p>Every instance sharing the limits must have the same secret: instances with different
         * secrets count apart, and changing it starts every key afresh. Keep it secret, as a
         * password: with it, anyone reading Redis could test guesses (phone numbers are few).
         *
         * @param secret at least 16 bytes, best 32 random ones; copied
         * @return this builder
         */
        public Builder keyHashSecret(byte[] secret) {
            this.keyHasher = KeyHasher.of(secret);
            return this;
        }

        /**
         * Keep keys in Redis as their HMAC-SHA-256 under the UTF-8 bytes of this secret; see
         * {@link #keyHashSecret(byte[])}.
         *
         * @param secret at least 16 bytes in UTF-8
         * @return this builder
         */
        public Builder keyHashSecret(String secret) {
            this.keyHasher = KeyHasher.of(secret);
            return this;
        }

        /**
         * Decide with the client's time instead of the Redis server's. Every instance sharing
         * a limit must then keep its clock in step with the others. Redis still expires keys on
         * its own clock, so a key's state is kept at least ten minutes after its last change,
         * whatever this clock does: more memory for keys used once than with the server's time,
         * which is the choice for production.
         *
         * @param clock the time source; by default the server's {@code TIME} is used
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Where asynchronous decisions complete, and so where the caller's continuation runs:
         * the rest of a {@code CompletableFuture} chain, or of a reactive pipeline (an admitted
         * WebFlux handler, or the rejection's response). Redisson completes its replies on its
         * netty threads, which must not run callers' code; the common fork-join pool has one
         * thread on a 2-core machine.
         *
         * @param executor default: a pool shared by the Redis stores of the JVM, of as many daemon
         *                 threads named {@code sluice-redis-<n>} as cores (at least 2), made when
         *                 needed and ended after 10 s idle
         * @return this builder
         */
        public Builder completionExecutor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * How long a decision may take before it fails with {@link StoreUnavailableException}
         * and its limiter applies its failure policy: the most a Redis outage costs a caller.
         * It holds whatever the client's own timeouts and retries are; the client's retries
         * are not used, the script refuses a call that reaches Redis after it, and a decision
         * whose answer comes after it is taken back, so a timed-out call is not counted. Keep it
         * well above the store's slowest healthy decisions (on a busy 2-core machine, 32
         * threads saw 10-20 ms at the 99.9th percentile).
         *
         * @param timeout at least 2 ms; default 100 ms
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            this.timeout = RedisCalls.checkTimeout(timeout);
            return this;
        }

        /**
         * The circuit breaker that stops sending calls to Redis while it keeps failing.
         *
         * @param breaker its open duration at least the store's timeout; default: opens when 16 of the
         *                last 20 calls failed, for the longer of 1 second and the timeout at a time
         * @return this builder
         */
        public Builder circuitBreaker(StoreCircuitBreaker breaker) {
            this.breaker = Objects.requireNonNull(breaker, "breaker");
            return this;
        }

        /**
         * The most decisions one script call decides. Decisions that wait for the store while
         * calls are in flight leave together, in the order they came, as one script call that
         * decides them all atomically; on an idle store a decision leaves at once, alone.
         *
         * @param batchSize 1 (one script call per decision) to 1,024; default 128
         * @return this builder
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > ScriptPipeline.MAX_BATCH_SIZE) {
                throw new IllegalArgumentException("batchSize must be within 1.." + ScriptPipeline.MAX_BATCH_SIZE
                        + ", was " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * The most decisions that may wait to be sent at once. Decisions beyond it get the
         * {@linkplain #onOverload(OverloadPolicy) overload policy} at once, so that a spike costs
         * bounded memory.
         *
         * @param maxQueued at least 1; default 20,000
         * @return this builder
         */
        public Builder maxQueued(int maxQueued) {
            if (maxQueued < 1) {
                throw new IllegalArgumentException("maxQueued must be at least 1, was " + maxQueued);
            }
            this.maxQueued = maxQueued;
            return this;
        }

        /**
         * The longest a decision may wait to be sent. One that waited longer when its turn comes
         * gets the {@linkplain #onOverload(OverloadPolicy) overload policy} instead: the store
         * answers fewer decisions than come. Time waiting to be sent is not Redis being slow: the
         * {@linkplain #timeout(Duration) timeout} counts from when a decision is sent.
         *
         * @param maxQueueWait positive; default 1 second
         * @return this builder
         */
        public Builder maxQueueWait(Duration maxQueueWait) {
            Objects.requireNonNull(maxQueueWait, "maxQueueWait");
            if (maxQueueWait.isNegative() || maxQueueWait.isZero()) {
                throw new IllegalArgumentException("maxQueueWait must be positive, was " + maxQueueWait);
            }
            this.maxQueueWait = maxQueueWait;
            return this;
        }

        /**
         * What decisions beyond the queue get: refused as a rejection, or decided in this JVM.
         *
         * @param onOverload default {@link OverloadPolicy#REJECT}
         * @return this builder
         */
        public Builder onOverload(OverloadPolicy onOverload) {
            this.onOverload = Objects.requireNonNull(onOverload, "onOverload");
            return this;
        }

        /**
         * Builds the store. Nothing is sent to Redis until the first decision.
         *
         * @return the store
         */
        public RedissonRateLimitStore build() {
            return new RedissonRateLimitStore(this);
        }
    }
}
