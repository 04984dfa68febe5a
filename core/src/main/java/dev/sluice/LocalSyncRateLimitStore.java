package dev.sluice;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import dev.sluice.annotation.Algorithm;
import dev.sluice.internal.Ago;
import dev.sluice.internal.StoreKeys;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Two-layer counting for the hottest keys: decides in this JVM against the counts all instances
 * had when this one last synced with the shared store, plus what this one admitted since, and
 * syncs each key with the store once per {@linkplain Builder#interval interval}: one round trip
 * per key per interval (all tiers of the key in it, atomic in the store) instead of one per call.
 *
 * <pre class="code">
 * RateLimitStore store = LocalSyncRateLimitStore.builder(RedissonRateLimitStore.builder(redisson).build())
 *         .interval(Duration.ofSeconds(1))
 *         .build();
 * </pre>
 *
 * <p><strong>What it costs: a bounded overshoot.</strong> Between two syncs an instance admits at
 * most its <em>share</em> of each tier before it syncs at once, the calling thread waiting for
 * that round trip: {@code share = ceil(limit × interval / window)}, at least 1 (at least the
 * cost of the call that finds it spent). So per window, all instances together admit at most
 * {@code limit + (instances − 1) × share}; with a 1 s interval, 600 per minute and three
 * instances that is 600 + 2 × 10 = 620. An instance learns of calls other instances admitted (and
 * of their rejections: a key at its limit) at its next sync of the key, within one interval or as
 * soon as its share is spent. A key's first call on an instance waits for one sync, so that it
 * starts from the shared counts, and so does a call that finds the key not synced for two
 * intervals.
 *
 * <p><strong>Time.</strong> Each instance decides in the store's windows, with its clock moved
 * to the store's time by an offset measured at every sync, its round trip timed on the JVM's
 * monotonic timer. A clock set back or forward (an NTP step, a resumed VM) is taken up again by
 * the next sync, which the next call of a key waits for: the first sync whose measure the offset
 * in use cannot explain replaces it. A sync never moves the store's time: what an instance ahead
 * of it counted is counted in the store's current window.
 *
 * <p><strong>Algorithms.</strong> {@code FIXED_WINDOW} and {@code SLIDING_WINDOW}: their counts
 * add up across instances. Not {@code SLIDING_LOG}, whose exactness is the point of it (its log
 * would have to travel call by call), nor {@code TOKEN_BUCKET}, whose level refills continuously
 * between syncs. Tiers with a {@link Tier#blockFor()} are refused too: a block one instance
 * decided would reach the others only at their next sync. {@link Tier#countRejected()} keeps its
 * meaning: rejected calls are counted here and synced as admitted ones are.
 *
 * <p><strong>Outages.</strong> While the store's circuit breaker is open, decisions go on in this
 * JVM from the counts it has, without waiting and without a share (so each instance may admit up
 * to the whole limit); {@link #statistics()} says so. Before it opens, a call whose sync fails
 * waits for one more, at most, then is decided here too. What was counted meanwhile is synced
 * once the store answers again; a sync whose answer was lost is sent again as it was and
 * counted once.
 *
 * <p><strong>Giving back.</strong> The permits of a call given back ({@link #giveBack}) come off
 * this instance's counts at once. What of them it had not synced yet never reaches the store; what
 * it had synced comes off the store's counts with the key's next sync, which takes it off exactly
 * once, as it adds counts: a sync sent again takes nothing off the second time. A call admitted
 * before this instance last took the key up (since, it was reset here, or dropped from memory) is
 * given back by the store directly, which gives back only what it can tell was counted: it takes a
 * window that a sync opened in the store to have counted no call admitted before that sync, so
 * such a call of the window's first sync stays counted, the strict side.
 *
 * <p>Keys not used for a minute (or two intervals, if longer) are dropped from memory, their
 * counts synced first (a sync that fails is sent again, as any other, until the store has it);
 * the key's next call waits for one sync. At most
 * {@linkplain Builder#maximumKeys maximumKeys} keys are kept. Thread-safe; {@link #close()} syncs
 * what is left and stops the background sync.
 */
public final class LocalSyncRateLimitStore implements RateLimitStore, AutoCloseable {

    private static final Set<Algorithm> ALGORITHMS =
            Collections.unmodifiableSet(EnumSet.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW));
    private static final System.Logger LOGGER = System.getLogger(LocalSyncRateLimitStore.class.getName());
    /**
     * For a store without a circuit breaker: failed syncs in a row after which it counts as
     * unreachable. One slow answer is not an outage.
     */
    private static final int FAILURES_TO_UNREACHABLE = 3;
    /** Failed syncs a call waits for before it is decided here without one. */
    private static final int FAILED_SYNCS_A_CALL_WAITS_FOR = 2;
    /**
     * Syncs due on the interval that may be in flight at once; more wait for a later call or
     * pass, so that keys synced together do not all come due, and time out, together.
     */
    private static final int PERIODIC_SYNCS_IN_FLIGHT = 64;
    /**
     * How far a key's time may run ahead of this instance's reading of the store's time before the
     * key is taken to have followed a clock that was set forward: more than the reading's error.
     */
    private static final long AHEAD_TOLERANCE_MILLIS = 1_000;
    /** Returned by a decision made on a key dropped meanwhile: decide again. */
    private static final CompletableFuture<Boolean> DECIDE_AGAIN = CompletableFuture.completedFuture(true);

    private final CountSyncStore store;
    private final @Nullable StoreCircuitBreaker breaker;
    private final InstantSource clock;
    private final long intervalMillis;
    private final String instance = UUID.randomUUID().toString();
    private final AtomicLong sequence = new AtomicLong();
    private final Cache<String, LocalKey> keys;
    /**
     * Keys dropped from {@link #keys} while what they counted had not reached the store yet, by
     * key: synced as the keys held are, until it has, and taken up again by the key's next call,
     * so that one key never has two syncs under way. At most {@link Builder#maximumKeys} of them.
     */
    private final Map<String, LocalKey> droppedUnsynced = new ConcurrentHashMap<>();
    private final long maximumKeys;
    private final ScheduledExecutorService background;
    private final LongAdder syncs = new LongAdder();
    private final LongAdder failedSyncs = new LongAdder();
    private final LongAdder decisionsWhileUnreachable = new LongAdder();
    private final Semaphore periodicSyncs = new Semaphore(PERIODIC_SYNCS_IN_FLIGHT);
    private final AtomicInteger failuresInARow = new AtomicInteger();
    /** The store's time minus this clock's, as taken from the best sync (see {@link #sampleOffset}). */
    private volatile long offset;
    private final Object offsetSample = new Object();
    /** The estimate the offset was taken from, before it was rounded to zero. */
    private long offsetEstimate;
    /** The round trip of the sync the offset was taken from, in nanoseconds; {@code Long.MAX_VALUE} before any. */
    private long offsetRoundTrip = Long.MAX_VALUE;
    /** When that sync was answered, in nanoseconds of the monotonic timer. */
    private long offsetSampledAt;
    /** Whether the latest change of {@link #storeReachable()} was logged as an outage. */
    private final AtomicBoolean loggedUnreachable = new AtomicBoolean();

    private LocalSyncRateLimitStore(Builder builder) {
        this.store = builder.store;
        this.breaker = store.circuitBreaker().orElse(null);
        this.clock = builder.clock;
        this.intervalMillis = builder.interval.toMillis();
        this.maximumKeys = builder.maximumKeys;
        // How long a key stays in memory only frees memory and decides nothing: Caffeine's own ticker.
        this.keys = Caffeine.newBuilder()
                .maximumSize(builder.maximumKeys)
                .expireAfterAccess(Duration.ofMillis(Math.max(60_000, 2 * intervalMillis)))
                .executor(Runnable::run)
                // Within the eviction, so that no call of the key takes it up again before it is kept apart to sync.
                .evictionListener((String key, LocalKey local, RemovalCause cause) -> {
                    if (local != null) {
                        local.evicted();
                    }
                })
                // Reset and clear remove keys explicitly, and drop what was counted.
                .removalListener((String key, LocalKey local, RemovalCause cause) -> {
                    if (local != null && !cause.wasEvicted()) {
                        local.removed();
                    }
                })
                .build();
        this.background = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "sluice-local-sync");
            thread.setDaemon(true);
            return thread;
        });
        background.scheduleWithFixedDelay(this::syncDueKeys, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts a store definition.
     *
     * @param store the shared store to sync with, for instance a {@code RedissonRateLimitStore}
     * @return a builder
     */
    public static Builder builder(CountSyncStore store) {
        return new Builder(store);
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        RateLimitStore.check(this, key, tiers, cost);
        KeyState.Outcome outcome = new KeyState.Outcome();
        int failedSyncs = 0;
        for (;;) {
            CompletableFuture<Boolean> sync = decide(key, tiers, cost, outcome, failedSyncs);
            if (sync == null) {
                return outcome.decision();
            }
            // Bounded by the store's timeout.
            if (!sync.join()) {
                failedSyncs++;
            }
        }
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        try {
            RateLimitStore.check(this, key, tiers, cost);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return decideAsync(key, tiers, cost, new KeyState.Outcome(), 0);
    }

    private CompletableFuture<Decision> decideAsync(String key, List<Tier> tiers, long cost, KeyState.Outcome outcome,
                                                    int failedSyncs) {
        int failed = failedSyncs;
        for (;;) {
            CompletableFuture<Boolean> sync = decide(key, tiers, cost, outcome, failed);
            if (sync == null) {
                return CompletableFuture.completedFuture(outcome.decision());
            }
            if (!sync.isDone()) {
                int failedBefore = failed;
                return sync.thenCompose(answered -> decideAsync(key, tiers, cost, outcome,
                        answered ? failedBefore : failedBefore + 1));
            }
            if (!sync.join()) {
                failed++;
            }
        }
    }

    /**
     * Decides in this JVM; or, when the key must sync first, the sync to wait for, which
     * completes with whether the store answered it. A call that saw {@code failedSyncs} of its
     * syncs fail is decided without one.
     */
    private @Nullable CompletableFuture<Boolean> decide(String key, List<Tier> tiers, long cost,
                                                        KeyState.Outcome outcome, int failedSyncs) {
        // Bounded, as every store keeps keys: an instance holds no caller's megabyte key.
        LocalKey local = keys.get(StoreKeys.bounded(key), this::takenUp);
        synchronized (local) {
            return local.decide(tiers, cost, outcome, failedSyncs >= FAILED_SYNCS_A_CALL_WAITS_FOR);
        }
    }

    /**
     * The key as this instance takes it up: the one dropped from memory before its counts reached
     * the store, if any, which goes on from where it was, or a new one. A new one beside it would
     * sync with a later sequence first, and the store would take the dropped one's sync for one
     * it already has.
     */
    private LocalKey takenUp(String key) {
        LocalKey dropped = droppedUnsynced.remove(key);
        if (dropped != null && dropped.takenUpAgain()) {
            return dropped;
        }
        return new LocalKey(key);
    }

    /**
     * Forgets the key here and in the store; what this instance counted and had not synced yet
     * is dropped, not synced.
     */
    @Override
    public void reset(String key, List<Tier> tiers) {
        RateLimitStore.check(this, key, tiers);
        String bounded = StoreKeys.bounded(key);
        keys.invalidate(bounded);
        droppedUnsynced.remove(bounded);
        store.reset(key, tiers);
    }

    /**
     * Gives back the permits of a call this store admitted (see {@link RateLimitStore#giveBack}):
     * in this JVM at once, and in the store with the key's next sync, within an interval. A call
     * admitted before this instance last took the key up is given back by the store directly.
     *
     * @throws UnsupportedOperationException when the store synced with cannot give back a tier's
     *         permits, or this store cannot hold the tier
     * @throws StoreUnavailableException when the store had to give the permits back and cannot be
     *         reached in time
     */
    @Override
    public void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
        checkGiveBack(key, tiers, cost);
        if (!givenBackHere(key, tiers, cost, Ago.millis(ago))) {
            store.giveBack(key, tiers, cost, ago);
        }
    }

    @Override
    public CompletionStage<Void> giveBackAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        try {
            checkGiveBack(key, tiers, cost);
            if (givenBackHere(key, tiers, cost, Ago.millis(ago))) {
                return CompletableFuture.completedFuture(null);
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return store.giveBackAsync(key, tiers, cost, ago);
    }

    /** The tiers this store holds whose permits the store synced with gives back too. */
    @Override
    public boolean givesBack(Tier tier) {
        return supports(tier) && store.givesBack(tier);
    }

    /**
     * Recounts a call (see {@link RateLimitStore#recount}): nothing changes, as the window tiers
     * this store holds keep no call times. Keys are not {@linkplain RateLimitStore#pause paused}
     * here: a pause one instance took would reach the others only at their next sync, as a block
     * would.
     */
    @Override
    public void recount(String key, List<Tier> tiers, long cost, Duration ago) {
        RateLimitStore.check(this, key, tiers, cost);
        Objects.requireNonNull(ago, "ago");
    }

    /** The tiers this store holds: recounting changes none of them. */
    @Override
    public boolean recounts(Tier tier) {
        return supports(tier);
    }

    private void checkGiveBack(String key, List<Tier> tiers, long cost) {
        RateLimitStore.check(this, key, tiers, cost);
        for (Tier tier : tiers) {
            if (!store.givesBack(tier)) {
                throw new UnsupportedOperationException(store.getClass().getSimpleName()
                        + " cannot give back the permits of " + tier + ", so neither can "
                        + LocalSyncRateLimitStore.class.getSimpleName() + " that syncs with it");
            }
        }
    }

    /** Gives back in this JVM; {@code false} when the key is not held here since the call was admitted. */
    private boolean givenBackHere(String key, List<Tier> tiers, long cost, long agoMillis) {
        LocalKey local = keys.getIfPresent(StoreKeys.bounded(key));
        if (local == null) {
            return false;
        }
        synchronized (local) {
            return local.givenBack(tiers, cost, agoMillis);
        }
    }

    /**
     * Forgets every key held here, for tests; what was counted and not synced yet is dropped. The
     * store synced with keeps its counts: clear it too (a Redis store has a {@code clear()}).
     */
    public void clear() {
        keys.invalidateAll();
        droppedUnsynced.clear();
    }

    /** The circuit breaker of the store synced with. */
    @Override
    public Optional<StoreCircuitBreaker> circuitBreaker() {
        return store.circuitBreaker();
    }

    /** {@code FIXED_WINDOW} and {@code SLIDING_WINDOW}, those the store supports too. */
    @Override
    public Set<Algorithm> supportedAlgorithms() {
        return ALGORITHMS;
    }

    /** Window tiers without {@link Tier#blockFor()} that the store supports. */
    @Override
    public boolean supports(Tier tier) {
        return ALGORITHMS.contains(tier.algorithm()) && tier.blockFor().isZero() && store.supports(tier);
    }

    /**
     * Syncs now every key with counts not synced yet, and waits for the answers: what was
     * counted before the call is in the store afterwards, if the store can be reached.
     */
    public void flush() {
        for (int round = 0; round < 2; round++) {
            List<CompletableFuture<Boolean>> syncs = new ArrayList<>();
            for (LocalKey local : syncable()) {
                synchronized (local) {
                    CompletableFuture<Boolean> sync = local.inFlight != null ? local.inFlight
                            : local.unsynced() ? local.sync(now()) : null;
                    if (sync != null) {
                        syncs.add(sync);
                    }
                }
            }
            CompletableFuture.allOf(syncs.toArray(CompletableFuture[]::new)).join();
        }
    }

    /** Stops syncing in the background and {@linkplain #flush() flushes}. */
    @Override
    public void close() {
        background.shutdownNow();
        flush();
    }

    /**
     * What the store did so far: for metrics and health checks.
     *
     * @return the figures
     */
    public Statistics statistics() {
        return new Statistics(syncs.sum(), failedSyncs.sum(), decisionsWhileUnreachable.sum(), storeReachable());
    }

    /**
     * What a {@link LocalSyncRateLimitStore} did so far.
     *
     * @param syncs                      syncs the store answered
     * @param failedSyncs                syncs that failed (store unreachable, too slow, its circuit
     *                                   breaker open)
     * @param decisionsWhileUnreachable  decisions made in this JVM without the store: while it could
     *                                   not be reached, or after the call's own syncs failed
     * @param storeReachable             whether the store can be reached: its circuit breaker is not
     *                                   open (without one: fewer than three syncs in a row failed)
     */
    public record Statistics(long syncs, long failedSyncs, long decisionsWhileUnreachable, boolean storeReachable) {
    }

    /** This clock in the store's time. */
    private long now() {
        return clock.millis() + offset;
    }

    /**
     * Takes the offset to the store's clock from a sync whose round trip, timed on the monotonic
     * timer from {@code sentAtNanos}, was the shortest yet: the store read its clock somewhere
     * within the round trip, so the shorter it is, the better the estimate. The best round trip is
     * aged by a millisecond a second, so that the offset follows clocks that drift apart. A sync
     * whose estimate the best one's uncertainty cannot explain replaces it, however long its
     * round trip: this clock or the store's was set since (a step, an NTP correction, a
     * resumed VM), and the best sample is out of date. An offset no larger than the estimate's
     * uncertainty is taken as none. Round trips and ages are never read off this clock, which
     * may step while a sync is on its way.
     */
    private void sampleOffset(long storeNow, long sentAtNanos) {
        long receivedAtNanos = MonotonicClock.nanos();
        long receivedAt = clock.millis();
        long roundTrip = receivedAtNanos - sentAtNanos;
        // Half the round trip, and a millisecond of rounding, either side of the estimate.
        long uncertainty = NANOSECONDS.toMillis(roundTrip) / 2 + 1;
        // The store's clock read storeNow about half a round trip before the answer came.
        long estimate = storeNow + NANOSECONDS.toMillis(roundTrip) / 2 - receivedAt;
        synchronized (offsetSample) {
            boolean first = offsetRoundTrip == Long.MAX_VALUE;
            long aged = first ? Long.MAX_VALUE : offsetRoundTrip + (receivedAtNanos - offsetSampledAt) / 1_000;
            boolean contradicted = !first
                    && Math.abs(estimate - offsetEstimate) > uncertainty + NANOSECONDS.toMillis(aged) / 2 + 1;
            if (roundTrip <= aged || contradicted) {
                offsetRoundTrip = roundTrip;
                offsetSampledAt = receivedAtNanos;
                offsetEstimate = estimate;
                // Within the estimate's uncertainty the clocks agree: instances on clocks kept in step then all
                // decide on their own.
                offset = Math.abs(estimate) <= uncertainty ? 0 : estimate;
            }
        }
    }

    /** The background pass: syncs keys idle since they counted, so that their counts reach the store. */
    private void syncDueKeys() {
        try {
            long now = now();
            for (LocalKey local : syncable()) {
                synchronized (local) {
                    if (local.inFlight == null && local.due(now) && local.unsynced()) {
                        local.periodicSync(now);
                    }
                }
            }
        } catch (RuntimeException e) {
            // The message, not the stack trace: it may quote a key, which is escaped onto the line.
            LOGGER.log(System.Logger.Level.WARNING, () -> "Syncing local counts failed: "
                    + LogText.escape(StoreUnavailableException.describe(e)));
        }
    }

    /** The keys held and those dropped before their counts reached the store. */
    private List<LocalKey> syncable() {
        List<LocalKey> syncable = new ArrayList<>(keys.asMap().values());
        syncable.addAll(droppedUnsynced.values());
        return syncable;
    }

    /**
     * Whether syncs can reach the store: its circuit breaker is not open, or, for a store without
     * one, fewer than three syncs in a row failed. Until then, a sync that fails makes its callers
     * wait for another, and only a call whose syncs failed twice is decided without one.
     */
    private boolean storeReachable() {
        return breaker != null ? breaker.state() != StoreCircuitBreaker.State.OPEN
                : failuresInARow.get() < FAILURES_TO_UNREACHABLE;
    }

    private void synced() {
        failuresInARow.set(0);
        if (loggedUnreachable.compareAndSet(true, false)) {
            LOGGER.log(System.Logger.Level.INFO, "Local-sync rate limiting: the store answers again; syncing the"
                    + " counts made meanwhile");
        }
    }

    private void syncFailed(Throwable failure, String key) {
        failedSyncs.increment();
        failuresInARow.incrementAndGet();
        if (!storeReachable() && loggedUnreachable.compareAndSet(false, true)) {
            LOGGER.log(System.Logger.Level.WARNING, () -> "Local-sync rate limiting: the store cannot be reached ("
                    + LogText.escape(StoreUnavailableException.describe(failure, key)) + "); deciding in this JVM from the counts it"
                    + " has until it answers again");
        }
    }

    private long share(Tier tier) {
        return Math.max(1, (long) Math.ceil((double) tier.limit() * intervalMillis / tier.windowMillis()));
    }

    /**
     * One key as this instance knows it: its counters (the counts all instances had at the last
     * sync plus what this one counted since) and what of them this instance has sent to the
     * store. Guarded by its own monitor.
     */
    private final class LocalKey {

        /** The key, {@linkplain StoreKeys#bounded bounded}: as it is synced. */
        private final String key;
        private @Nullable KeyState state;
        private final List<Sent> sent = new ArrayList<>(1);
        /** The tiers of the key's latest call: those a background sync sends. */
        private @Nullable List<Tier> tiers;
        /** The sync sent and not answered yet, or that failed: sent again as it is. */
        private @Nullable Pending pending;
        private @Nullable CompletableFuture<Boolean> inFlight;
        private long lastSync = Long.MIN_VALUE / 2;
        private boolean synced;
        private boolean dropped;
        /** When this instance took the key up: it knows of no call admitted before. */
        private final long created;

        LocalKey(String key) {
            this.key = key;
            this.created = now();
        }

        @Nullable CompletableFuture<Boolean> decide(List<Tier> tiers, long cost, KeyState.Outcome outcome,
                                                    boolean withoutSync) {
            if (dropped) {
                return DECIDE_AGAIN;
            }
            long now = now();
            this.tiers = tiers;
            boolean alone = withoutSync || !storeReachable();
            if (!alone && (!synced || stale(now) || shareSpent(tiers, cost, now))) {
                return inFlight != null ? inFlight : sync(now);
            }
            KeyState counters = counters(tiers.get(0), now);
            counters.decide(now, tiers, cost, 0, outcome);
            if (alone) {
                decisionsWhileUnreachable.increment();
            }
            if (inFlight == null && due(now)) {
                periodicSync(now);
            }
            return null;
        }

        /**
         * Gives back a call admitted {@code agoMillis} ago from every tier whose current or
         * previous window counted it: what of its cost was not sent yet is never sent, the rest is
         * taken off the store's counts with the next sync. The caller holds the monitor.
         *
         * @return {@code false} when the call was admitted before this instance took the key up,
         *         or the key was dropped: then only the store may have counted it
         */
        boolean givenBack(List<Tier> tiers, long cost, long agoMillis) {
            long now = now();
            long admitted = now - agoMillis;
            if (dropped || admitted < created) {
                return false;
            }
            for (Tier tier : tiers) {
                Sent tierSent = sent(tier);
                KeyState.WindowCounter counter = counter(tier, tierSent, now);
                long window = tier.windowMillis();
                long counted = KeyState.windowStart(admitted, window);
                if (counted == counter.start()) {
                    long amount = Math.min(cost, counter.current());
                    long fromStore = amount - Math.min(amount, tierSent.unsentCurrent(counter));
                    counter.counts(counter.start(), counter.current() - amount, counter.previous());
                    tierSent.current -= fromStore;
                    tierSent.backCurrent += fromStore;
                } else if (tier.algorithm() == Algorithm.SLIDING_WINDOW && counted == counter.start() - window) {
                    long amount = Math.min(cost, counter.previous());
                    long fromStore = amount - Math.min(amount, tierSent.unsentPrevious(counter));
                    counter.counts(counter.start(), counter.current(), counter.previous() - amount);
                    tierSent.previous -= fromStore;
                    tierSent.backPrevious += fromStore;
                }
                // Otherwise the call's window no longer counts.
            }
            if (this.tiers == null) {
                this.tiers = tiers;
            }
            return true;
        }

        private KeyState counters(Tier first, long now) {
            KeyState counters = state;
            if (counters == null) {
                counters = KeyState.create(first, now);
                state = counters;
            }
            return counters;
        }

        /** Whether a call of {@code cost} would take this instance past its share of a tier. */
        private boolean shareSpent(List<Tier> tiers, long cost, long now) {
            for (Tier tier : tiers) {
                Sent tierSent = sent(tier);
                KeyState.WindowCounter counter = counter(tier, tierSent, now);
                long used = tierSent.inFlight + tierSent.unsentCurrent(counter) + tierSent.unsentPrevious(counter);
                if (used > 0 && used + cost > share(tier)) {
                    return true;
                }
            }
            return false;
        }

        /** Whether anything counted or given back here has not reached the store. */
        boolean unsynced() {
            if (pending != null) {
                return true;
            }
            if (tiers == null || state == null) {
                return false;
            }
            long now = now();
            for (Tier tier : tiers) {
                Sent tierSent = sent(tier);
                KeyState.WindowCounter counter = counter(tier, tierSent, now);
                if (tierSent.unsentCurrent(counter) + tierSent.unsentPrevious(counter) > 0
                        || tierSent.backCurrent + tierSent.backPrevious > 0) {
                    return true;
                }
            }
            return false;
        }

        /** The tier's counter, moved to {@code now}, with what was sent of it moved along. */
        private KeyState.WindowCounter counter(Tier tier, Sent tierSent, long now) {
            KeyState counters = counters(tier, now);
            long at = Math.max(now, counters.latest());
            KeyState tierState = counters.stateFor(tier, at);
            tierState.advance(at, tier.windowMillis(), tier.limit());
            KeyState.WindowCounter counter = (KeyState.WindowCounter) tierState;
            tierSent.moveTo(counter.start(), tier.windowMillis());
            return counter;
        }

        private Sent sent(Tier tier) {
            for (Sent tierSent : sent) {
                if (tierSent.tier.sharesStateWith(tier)) {
                    return tierSent;
                }
            }
            Sent added = new Sent(tier);
            sent.add(added);
            return added;
        }

        /**
         * Whether the key has not synced for more than two intervals, by this clock: it was not in
         * use, or the clock was set back or forward since. Its next call syncs first, so that it
         * decides with what the other instances counted meanwhile, and in the store's windows.
         * The caller holds the monitor.
         */
        private boolean stale(long now) {
            return Math.abs(now - lastSync) > 2 * intervalMillis;
        }

        /**
         * Whether the key's sync is due on the interval: an interval after the last, or at once
         * when the clock was set back since, so that the sync takes the clock up again. The caller
         * holds the monitor.
         */
        boolean due(long now) {
            return now - lastSync >= intervalMillis || lastSync - now > AHEAD_TOLERANCE_MILLIS;
        }

        /** A sync due on the interval, unless too many are in flight already; the caller holds the monitor. */
        void periodicSync(long now) {
            if (periodicSyncs.tryAcquire()) {
                sync(now).whenComplete((done, failure) -> periodicSyncs.release());
            }
        }

        /** Sends what was counted and not sent (or the unanswered sync again); the caller holds the monitor. */
        CompletableFuture<Boolean> sync(long now) {
            Pending sending = pending;
            if (sending == null) {
                List<Tier> syncing = Objects.requireNonNull(tiers);
                List<CountSyncStore.WindowCounts> counted = new ArrayList<>(syncing.size());
                List<CountSyncStore.WindowCounts> givenBack = new ArrayList<>(syncing.size());
                boolean anyGivenBack = false;
                for (Tier tier : syncing) {
                    Sent tierSent = sent(tier);
                    KeyState.WindowCounter counter = counter(tier, tierSent, now);
                    long current = tierSent.unsentCurrent(counter);
                    long previous = tierSent.unsentPrevious(counter);
                    counted.add(new CountSyncStore.WindowCounts(counter.start(), current, previous));
                    // Taken off what this instance takes the store to have already, as sent.
                    givenBack.add(new CountSyncStore.WindowCounts(counter.start(), tierSent.backCurrent,
                            tierSent.backPrevious));
                    anyGivenBack |= tierSent.backCurrent + tierSent.backPrevious > 0;
                    tierSent.sending(current, previous);
                }
                sending = new Pending(syncing, new CountSyncStore.Sync(instance, sequence.incrementAndGet(), counted,
                        anyGivenBack ? givenBack : List.of()));
                pending = sending;
            }
            lastSync = now;
            Pending sent = sending;
            long sentAtNanos = MonotonicClock.nanos();
            CompletableFuture<CountSyncStore.Totals> answer;
            try {
                answer = store.sync(key, sent.tiers, sent.sync).toCompletableFuture();
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            CompletableFuture<Boolean> done = answer.handle((totals, failure) -> {
                synchronized (this) {
                    answered(sent, sentAtNanos, totals, failure);
                }
                return totals != null;
            });
            if (!done.isDone()) {
                inFlight = done;
            }
            return done;
        }

        private void answered(Pending sent, long sentAtNanos, CountSyncStore.@Nullable Totals totals,
                              @Nullable Throwable failure) {
            inFlight = null;
            if (totals == null) {
                syncFailed(Objects.requireNonNull(failure), key);
                return;
            }
            syncs.increment();
            sampleOffset(totals.now(), sentAtNanos);
            synced();
            pending = null;
            synced = true;
            if (dropped && !unsynced()) {
                droppedUnsynced.remove(key, this);
            }
            long now = now();
            if (state != null && state.latest() - now > AHEAD_TOLERANCE_MILLIS) {
                startAgain(sent.tiers, now);
            }
            for (int i = 0; i < sent.tiers.size(); i++) {
                Tier tier = sent.tiers.get(i);
                CountSyncStore.WindowCounts total = totals.counts().get(i);
                Sent tierSent = sent(tier);
                tierSent.inFlight = 0;
                KeyState.WindowCounter counter = counter(tier, tierSent, now);
                long unsentCurrent = tierSent.unsentCurrent(counter);
                long unsentPrevious = tierSent.unsentPrevious(counter);
                // Never less than this instance itself synced: a store that lost the window (a restart, a flush, a
                // key gone) must not make this instance admit again what it admitted.
                // Given back since the sync was sent: the store still has it, and takes it off at the next.
                if (total.windowStart() == counter.start()) {
                    long current = Math.max(total.current(), tierSent.mineCurrent);
                    long previous = Math.max(total.previous(), tierSent.minePrevious);
                    tierSent.backCurrent = Math.min(tierSent.backCurrent, current);
                    tierSent.backPrevious = Math.min(tierSent.backPrevious, previous);
                    tierSent.current = current - tierSent.backCurrent;
                    tierSent.previous = previous - tierSent.backPrevious;
                    counter.counts(counter.start(), tierSent.current + unsentCurrent, tierSent.previous + unsentPrevious);
                } else if (total.windowStart() == counter.start() - tier.windowMillis()) {
                    // The store is a window behind this instance: its current window is this one's previous.
                    long previous = Math.max(total.current(), tierSent.minePrevious);
                    tierSent.backPrevious = Math.min(tierSent.backPrevious, previous);
                    tierSent.previous = previous - tierSent.backPrevious;
                    counter.counts(counter.start(), counter.current(), tierSent.previous + unsentPrevious);
                }
                // Otherwise the store's window is not one this instance counts in: nothing to learn.
            }
        }

        /**
         * The key's time ran ahead of the store's: this clock was set forward, and the latest sync
         * set it right. Its windows are not the store's, and a key's time never runs back, so the
         * key starts again at {@code now}, keeping what it counted and has not synced, to be synced
         * into the store's window; what it gave back and has not synced stays counted, the strict
         * side.
         */
        private void startAgain(List<Tier> tiers, long now) {
            long[] unsent = new long[tiers.size()];
            for (int i = 0; i < tiers.size(); i++) {
                Sent tierSent = sent(tiers.get(i));
                KeyState.WindowCounter counter = counter(tiers.get(i), tierSent, state.latest());
                unsent[i] = tierSent.unsentCurrent(counter) + tierSent.unsentPrevious(counter);
            }
            state = null;
            sent.clear();
            for (int i = 0; i < tiers.size(); i++) {
                Tier tier = tiers.get(i);
                Sent tierSent = sent(tier);
                KeyState.WindowCounter counter = counter(tier, tierSent, now);
                counter.counts(counter.start(), unsent[i], 0);
            }
        }

        /**
         * Caffeine evicted the key: what it counted and has not synced is kept apart, and synced
         * as long as it takes the store to have it; calls still holding the key are sent back to
         * the cache.
         */
        synchronized void evicted() {
            dropped = true;
            if ((inFlight != null || unsynced()) && droppedUnsynced.size() < maximumKeys) {
                droppedUnsynced.put(key, this);
                if (inFlight == null) {
                    sync(now());
                }
            }
        }

        /** The key was reset or cleared: what it counted and has not synced is dropped. */
        synchronized void removed() {
            dropped = true;
        }

        /**
         * A call takes the key up again after it was evicted with counts not synced.
         *
         * @return {@code false} when it was reset meanwhile, and is not to be taken up
         */
        synchronized boolean takenUpAgain() {
            if (!dropped || pending == null && inFlight == null && !unsynced()) {
                return false;
            }
            dropped = false;
            return true;
        }
    }

    /** A sync sent and not answered yet. */
    private record Pending(List<Tier> tiers, CountSyncStore.Sync sync) {
    }

    /**
     * What of one window tier's local counts this instance has sent to the store or learnt from
     * it, for the window starting at {@link #start} and the one before, less what it gave back of
     * them and has not sent yet.
     */
    private static final class Sent {
        final Tier tier;
        long start = Long.MIN_VALUE;
        long current;
        long previous;
        /** Counted in the sync not answered yet. */
        long inFlight;
        /** Given back of what the store has, to take off with the next sync. */
        long backCurrent;
        long backPrevious;
        /** What this instance itself synced of each window, less what it took off since. */
        long mineCurrent;
        long minePrevious;

        Sent(Tier tier) {
            this.tier = tier;
        }

        /** Follows the counter into the window starting at {@code windowStart}. */
        void moveTo(long windowStart, long window) {
            if (windowStart == start) {
                return;
            }
            boolean next = start != Long.MIN_VALUE && windowStart - window == start;
            previous = next ? current : 0;
            backPrevious = next ? backCurrent : 0;
            minePrevious = next ? mineCurrent : 0;
            current = 0;
            backCurrent = 0;
            mineCurrent = 0;
            start = windowStart;
        }

        /** A sync takes what was counted and not sent, and what was given back, to the store. */
        void sending(long unsentCurrent, long unsentPrevious) {
            current += unsentCurrent;
            previous += unsentPrevious;
            inFlight = unsentCurrent + unsentPrevious;
            mineCurrent = Math.max(0, mineCurrent + unsentCurrent - backCurrent);
            minePrevious = Math.max(0, minePrevious + unsentPrevious - backPrevious);
            backCurrent = 0;
            backPrevious = 0;
        }

        long unsentCurrent(KeyState.WindowCounter counter) {
            return Math.max(0, counter.current() - current);
        }

        long unsentPrevious(KeyState.WindowCounter counter) {
            return Math.max(0, counter.previous() - previous);
        }
    }

    /** Configures a {@link LocalSyncRateLimitStore}. Not thread-safe; build once. */
    public static final class Builder {

        private final CountSyncStore store;
        private Duration interval = Duration.ofSeconds(1);
        private InstantSource clock = MonotonicClock.system();
        private long maximumKeys = 100_000;

        private Builder(CountSyncStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /**
         * How often each key in use syncs with the store, and so how large each instance's
         * share of a tier is ({@code ceil(limit × interval / window)}): the longer, the fewer
         * round trips and the larger the possible overshoot.
         *
         * @param interval from 1 ms to 1 hour; default 1 second
         * @return this builder
         */
        public Builder interval(Duration interval) {
            Objects.requireNonNull(interval, "interval");
            if (interval.toMillis() < 1 || interval.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("interval must be from 1 ms to 1 hour, was " + interval);
            }
            this.interval = interval;
            return this;
        }

        /**
         * The clock decisions read, moved to the store's time at each sync; the store's own
         * clock, if it has one, must follow it. A clock that is set back or forward is taken
         * up again at the key's next sync, within an interval; round trips are timed on the
         * JVM's monotonic timer whatever this clock does.
         *
         * @param clock default the system clock's time counted on the JVM's monotonic timer, which
         *              no one can set back or forward
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The most keys kept in memory; past it, the least used are synced and dropped.
         *
         * @param maximumKeys at least 1; default 100,000
         * @return this builder
         */
        public Builder maximumKeys(long maximumKeys) {
            if (maximumKeys < 1) {
                throw new IllegalArgumentException("maximumKeys must be at least 1, was " + maximumKeys);
            }
            this.maximumKeys = maximumKeys;
            return this;
        }

        /**
         * Builds the store and starts its background sync.
         *
         * @return the store
         */
        public LocalSyncRateLimitStore build() {
            return new LocalSyncRateLimitStore(this);
        }
    }
}
