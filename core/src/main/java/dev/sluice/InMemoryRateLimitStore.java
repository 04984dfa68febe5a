package dev.sluice;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import dev.sluice.internal.Ago;
import dev.sluice.internal.StoreKeys;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import dev.sluice.annotation.Algorithm;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The store inside the JVM: no set-up, exact, and the default. Every algorithm is supported,
 * {@link Algorithm#CONCURRENCY} included; all tiers of a key are decided under that key's lock,
 * so decisions are exact under any concurrency. Permits of a concurrency tier need no lease here:
 * a key holding permits is kept until they are given back.
 *
 * <p>Memory is bounded: a key's state is dropped once it is back to what a fresh key would have
 * (every tier full, no block); keys longer than 128 characters are kept as a digest; and at most
 * {@link Builder#maximumKeys(long)} keys are kept, besides restricted ones. When a flood of
 * distinct keys goes past that bound, Caffeine's W-TinyLFU policy drops the keys least likely to
 * be used again, which then start afresh; size the bound above the number of keys active within
 * your longest window.
 *
 * <p>A flood cannot lift a restriction: a key that is blocked, or whose next call would be
 * rejected, is kept apart, outside that bound, until its state is back to a fresh key's, so an
 * abuser cannot be forgotten by sending calls for a million other keys. Restricted keys have
 * their own bound, {@link Builder#maximumRestrictedKeys(long)}; while that many are restricted at
 * once, further restricted keys are kept like any other, and a flood may drop them.
 *
 * <pre class="code">
 * RateLimitStore store = InMemoryRateLimitStore.builder()
 *         .maximumKeys(500_000)
 *         .build();
 * </pre>
 *
 * <p>For limits shared by several application instances, use a Redis store.
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

    private static final VarHandle LATEST_MILLIS;
    private static final VarHandle SET_BACK_MILLIS;
    /** A clock found this far behind the latest time read was set back; less is the jitter of concurrent reads. */
    private static final long SET_BACK_THRESHOLD_MILLIS = 1_000;
    private static final long NEVER = Long.MIN_VALUE;
    private static final Set<Algorithm> ALGORITHMS = Collections.unmodifiableSet(EnumSet.allOf(Algorithm.class));
    /** How much later than a key's idle time Caffeine is told it, so that it need not be told on most calls. */
    private static final long EXPIRY_MARGIN_MILLIS = 1_024;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            LATEST_MILLIS = lookup.findVarHandle(InMemoryRateLimitStore.class, "latestMillis", long.class);
            SET_BACK_MILLIS = lookup.findVarHandle(InMemoryRateLimitStore.class, "setBackMillis", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final InstantSource clock;
    /** The time Caffeine's ticker counts from. */
    private final long originMillis;
    /**
     * The latest time any decision read, {@link #NEVER} before the first: Caffeine's time (from
     * {@link #originMillis} on), so that the clock is read once per decision.
     */
    private volatile long latestMillis = NEVER;
    /** How far the clock has been set back since the store began, in all: the store's time is the clock's plus this. */
    private volatile long setBackMillis;
    /**
     * The keys' states, each its own key (a state equals the states of its store key). Lookups
     * pass a {@link KeyProbe}, which equals the state of the store key it stands for, hence the
     * {@code Object} keys.
     */
    private final Cache<Object, KeyState> keys;
    private final Policy<Object, KeyState> policy;
    private final Policy.VarExpiration<Object, KeyState> expiration;
    /** Hashes keys under a secret of this store's, so that no caller can make keys collide. */
    private final SipHash hashes = SipHash.random();
    /**
     * The states of keys decided lately, each at the place {@code String.hashCode} of its store
     * key gives: a call finds its key's state here without hashing the key under the secret or
     * looking it up in Caffeine, and keys made one after another sit side by side. The first key
     * at a place keeps it while the store holds it; others that share the place, built to or by
     * chance, are looked up as any other. A state is put here and taken out under its lock, so
     * that none stays once the store drops it.
     */
    private final @Nullable KeyState[] placed;
    /** Each thread's probe; one per store, so that a store no longer used is not kept by threads. */
    private final ThreadLocal<KeyProbe> probes = ThreadLocal.withInitial(() -> new KeyProbe(hashes));
    /**
     * States Caffeine dropped while a decision was still changing them: held here until that
     * decision puts them back, or the next decision of their key takes them. Empty but for races.
     */
    private final Map<KeyState, KeyState> rescued = new ConcurrentHashMap<>();
    private final long maximumRestrictedKeys;
    /** How many keys are kept apart as restricted, outside the size bound. */
    private final AtomicLong restrictedKeys = new AtomicLong();
    /** Tells Caffeine of a state's new weight and idle time, or puts it back if it was rescued. */
    private final BiFunction<Object, @Nullable KeyState, @Nullable KeyState> update =
            (state, held) -> held != null ? held : taken((KeyState) state);

    private InMemoryRateLimitStore(Builder builder) {
        this.clock = builder.clock;
        this.maximumRestrictedKeys = builder.maximumRestrictedKeys;
        this.originMillis = clock.millis();
        this.keys = Caffeine.newBuilder()
                // A restricted key weighs nothing, so that no flood of other keys evicts it.
                .maximumWeight(builder.maximumKeys)
                .weigher((Object key, KeyState state) -> state.restrictedKept() ? 0 : 1)
                .expireAfter(new IdleExpiry())
                .ticker(() -> TimeUnit.MILLISECONDS.toNanos(Math.max(0, latestMillis - originMillis)))
                .executor(Runnable::run)
                .evictionListener(this::evicted)
                .build();
        this.policy = keys.policy();
        this.expiration = policy.expireVariably().orElseThrow();
        // A place for each key the store may hold, up to a million (4 MB at most).
        int places = (int) Math.min(builder.maximumKeys, 1 << 20);
        this.placed = new KeyState[Math.max(2, Integer.highestOneBit(places - 1) << 1)];
    }

    /**
     * Starts a store definition.
     *
     * @return a builder with the system clock, at most 100,000 keys, and as many restricted ones
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        RateLimitStore.check(this, key, tiers, cost);
        return decide("", key, tiers, cost);
    }

    /** Reserves the permits of calls whose tiers are all token buckets. */
    @Override
    public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
        RateLimitStore.check(this, key, tiers, cost, maxWait);
        return reserve("", key, tiers, cost, maxWait.toMillis());
    }

    @Override
    public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
        return answered(() -> reserve(key, tiers, cost, maxWait));
    }

    @Override
    public boolean reserves(Tier tier) {
        return tier.algorithm() == Algorithm.TOKEN_BUCKET;
    }

    /**
     * Decides one call for the key {@code prefix + key}, without making that string when the key
     * is held already: what a {@link RateLimiter} asks for its checked tiers.
     */
    Decision decide(String prefix, String key, List<Tier> tiers, long cost) {
        return decide(prefix, key, tiers, cost, 0).decision();
    }

    /** Reserves as {@link #reserve(String, List, long, Duration)} does, for the key {@code prefix + key}. */
    Reservation reserve(String prefix, String key, List<Tier> tiers, long cost, long maxWaitMillis) {
        return decide(prefix, key, tiers, cost, maxWaitMillis).reservation();
    }

    /** Decides one call; its figures are in the returned outcome, the calling thread's own. */
    private KeyState.Outcome decide(String prefix, String key, List<Tier> tiers, long cost, long maxWaitMillis) {
        long now = now();
        KeyProbe probe = probes.get();
        try {
            // A key decided lately is found at its place; a state the store has dropped since is
            // looked up again (its lock reads the flag again).
            int place = placeOf(prefix, key);
            KeyState state = place >= 0 ? placed[place] : null;
            KeyProbe lookup = null;
            if (state == null || state.dead() || !state.isKey(prefix, key)) {
                lookup = probe.of(prefix, key);
                // Quietly: Caffeine's bookkeeping of every read would cost more than the decision.
                state = policy.getIfPresentQuietly(lookup);
            }
            if (state != null) {
                boolean decided = false;
                boolean firstThisSecond = false;
                boolean reweigh = false;
                boolean later = false;
                state.lock();
                try {
                    if (!state.dead()) {
                        firstThisSecond = state.latest() >> 10 < now >> 10;
                        long idleBefore = state.idleUntil();
                        state.decide(now, tiers, cost, maxWaitMillis, probe.outcome);
                        decided = true;
                        place(place, state);
                        reweigh = keepApartIfRestricted(state, probe.outcome.remaining() == 0);
                        // A call that moves the idle time a little leaves it to the next second's first call
                        // to tell Caffeine, as it reads the key; one that moves it further tells it now.
                        later = toldIdleUntil(state.idleUntil()) > toldIdleUntil(idleBefore) + EXPIRY_MARGIN_MILLIS;
                    }
                } finally {
                    state.unlock();
                }
                if (decided) {
                    if (reweigh || later) {
                        told(state, reweigh, later);
                    } else if (firstThisSecond) {
                        // Caffeine hears of a key's use about once a second: enough for its eviction
                        // policy to tell the keys in use from a flood of new ones. The read also tells
                        // it of the key's idle time, as it stands.
                        keys.getIfPresent(state);
                    }
                    return probe.outcome;
                }
            }
            // A key too long to keep was digested for the lookup already: not again.
            return decideCreating(lookup != null ? lookup : probe.of(prefix, key), place, now, tiers, cost,
                    maxWaitMillis);
        } finally {
            probe.release();
        }
    }

    /**
     * The idle time Caffeine is told of a key: rounded up to the next 1,024 ms, and
     * {@link #EXPIRY_MARGIN_MILLIS} later, so that a key whose every call moves it a little (a
     * token bucket refilling one token at a time) changes its expiry in Caffeine about once a
     * second, as the first call of each second reads the key, rather than on every call. The key
     * lives up to about two seconds longer than it must; never less, unless calls moved its idle
     * time by more than the margin in one second and then stopped: then Caffeine drops it early
     * and the store rescues it.
     */
    private static long toldIdleUntil(long idleUntil) {
        return (((idleUntil + 1_023) >> 10) << 10) + EXPIRY_MARGIN_MILLIS;
    }

    /**
     * Tells Caffeine of a state's later idle time, before it would drop the key. Outside the
     * state's lock, so other decisions may move the time meanwhile: it is read again until it
     * stands, a few times at most (the decisions that move it tell Caffeine too, and a key that
     * Caffeine drops too early is rescued). Should the key have been dropped meanwhile, it is put
     * back.
     */
    private void expireLater(KeyState state) {
        long idle;
        int tries = 0;
        do {
            idle = toldIdleUntil(state.idleUntil());
            expiration.setExpiresAfter(state, Math.max(0, idle - state.latest()), TimeUnit.MILLISECONDS);
        } while (toldIdleUntil(state.idleUntil()) != idle && ++tries < 4);
        if (policy.getIfPresentQuietly(state) != state) {
            keys.asMap().compute(state, update);
        }
    }

    /**
     * Decides under Caffeine's lock of the key: for a key not held, or whose state was just
     * dropped. The state Caffeine is handed is its own key, so it is chosen before Caffeine's
     * lock is taken: the key's rescued state, if it has one, or else a fresh one; should that
     * choice be stale once the lock is held, it is made again.
     */
    private KeyState.Outcome decideCreating(KeyProbe probe, int place, long now, List<Tier> tiers, long cost,
                                            long maxWaitMillis) {
        KeyState.Outcome outcome = probe.outcome;
        creating(probe, now, tiers.get(0), state -> {
            state.decide(now, tiers, cost, maxWaitMillis, outcome);
            keepApartIfRestricted(state, outcome.remaining() == 0);
            place(place, state);
        });
        return outcome;
    }

    /**
     * The place of the store key {@code prefix + key} among {@link #placed}, or -1 for a key kept
     * as a digest, which a decision looks up as it did its first time.
     */
    private int placeOf(String prefix, String key) {
        if (!KeyProbe.raw(prefix, key)) {
            return -1;
        }
        return placeOf(KeyState.stringHash(prefix, key));
    }

    private int placeOf(int stringHash) {
        return (stringHash ^ stringHash >>> 16) & (placed.length - 1);
    }

    /**
     * Puts a state the store holds at its place, if the place is free; the caller holds its lock.
     * The first key keeps a place until the store drops it: keys sharing a place, by chance or
     * built to, would otherwise each take it from the other, miss it every time, and write it on
     * every call.
     */
    private void place(int place, KeyState state) {
        if (place >= 0) {
            KeyState held = placed[place];
            if (held == null || held.dead()) {
                placed[place] = state;
            }
        }
    }

    /** Takes a state the store drops out of its place, if it is there; the caller holds its lock. */
    private void unplace(KeyState state) {
        int place = placeOf(state.stringHash());
        if (placed[place] == state) {
            placed[place] = null;
        }
    }

    /**
     * Changes a key's state under Caffeine's lock of the key, and the state's own: the held one,
     * the rescued one, or a fresh one counting for {@code tier}.
     *
     * @return the state changed, which Caffeine holds
     */
    private KeyState creating(KeyProbe probe, long now, Tier tier, Consumer<KeyState> change) {
        KeyState kept;
        do {
            KeyState rescuedState = rescued.get(probe);
            KeyState candidate = rescuedState != null ? rescuedState
                    : KeyState.create(tier, now, probe.prefix, probe.key, probe.hash);
            kept = keys.asMap().compute(candidate, (k, held) -> {
                KeyState state = held != null ? held : taken(candidate);
                if (state != null) {
                    state.lock();
                    try {
                        change.accept(state);
                    } finally {
                        state.unlock();
                    }
                }
                return state;
            });
        } while (kept == null);
        return kept;
    }

    /**
     * The store's time, which is Caffeine's too: the clock's, except that once the clock is set
     * back by more than a second the store carries on from the latest time it read, at the
     * clock's pace. Keys and blocks then keep running as they did, rather than standing still
     * until the clock catches up, which would make every wait longer than the decisions said.
     * (The default clock never steps: it counts on from the system clock's time at start with
     * the JVM's monotonic timer.)
     */
    private long now() {
        long setBack = setBackMillis;
        // Read before the clock, as every time recorded was: a reading found behind it by more than
        // a second is the clock set back, not a decision that lingered (or was descheduled) meanwhile.
        long latest = latestMillis;
        long now = clock.millis() + setBack;
        if (latest != NEVER && now < latest - SET_BACK_THRESHOLD_MILLIS) {
            // The first decision to see the step records it; any other may have read the clock before.
            SET_BACK_MILLIS.compareAndSet(this, setBack, setBack + latest - now);
            return latest;
        }
        advanceTo(now);
        return now;
    }

    /** Moves Caffeine's time forward to {@code millis}, never back. */
    private void advanceTo(long millis) {
        long latest = latestMillis;
        while (millis > latest && !LATEST_MILLIS.weakCompareAndSet(this, latest, millis)) {
            latest = latestMillis;
        }
    }

    /**
     * Moves a key in or out of the restricted keys, which weigh nothing, as long as there is room;
     * the caller holds the state's lock.
     *
     * @return whether the key's weight changed
     */
    private boolean keepApartIfRestricted(KeyState state, boolean restricted) {
        if (restricted && !state.restrictedKept()) {
            long kept = restrictedKeys.get();
            while (kept < maximumRestrictedKeys) {
                if (restrictedKeys.compareAndSet(kept, kept + 1)) {
                    state.restrictedKept(true);
                    return true;
                }
                kept = restrictedKeys.get();
            }
        } else if (!restricted && state.restrictedKept()) {
            state.restrictedKept(false);
            restrictedKeys.decrementAndGet();
            return true;
        }
        return false;
    }

    /**
     * Caffeine dropped a key, expired or evicted, within its lock of the key. A decision may have
     * changed the state since Caffeine last heard of it: a state that is not back to a fresh one,
     * or that became restricted, is rescued rather than lost.
     */
    private void evicted(@Nullable Object key, @Nullable KeyState state, RemovalCause cause) {
        if (key == null || state == null) {
            return;
        }
        state.lock();
        try {
            state.dead(true);
            unplace(state);
            // Idle as of the key's own time, which a clock set back leaves behind Caffeine's.
            boolean rescue = cause == RemovalCause.EXPIRED ? state.idleUntil() > Math.max(state.latest(), now())
                    : cause == RemovalCause.SIZE && state.restrictedKept();
            if (rescue) {
                rescued.put(state, state);
            } else {
                release(state);
            }
        } finally {
            state.unlock();
        }
    }

    /**
     * The state to keep for a key Caffeine does not hold, within Caffeine's lock of the key:
     * {@code candidate} if it is the key's rescued state, taken back, or a fresh state while the
     * key has none rescued; otherwise none, as {@code candidate} is stale.
     */
    private @Nullable KeyState taken(KeyState candidate) {
        KeyState rescuedState = rescued.get(candidate);
        if (rescuedState == null) {
            // A dead state is one rescued once and since dropped for good.
            return candidate.dead() ? null : candidate;
        }
        if (rescuedState != candidate) {
            return null;
        }
        rescued.remove(candidate);
        candidate.lock();
        try {
            candidate.dead(false);
        } finally {
            candidate.unlock();
        }
        return candidate;
    }

    /** Gives up a dropped state's room among the restricted keys; the caller holds its lock. */
    private void release(KeyState state) {
        if (state.restrictedKept()) {
            state.restrictedKept(false);
            restrictedKeys.decrementAndGet();
        }
    }

    @Override
    public void reset(String key, List<Tier> tiers) {
        RateLimitStore.check(this, key, tiers);
        KeyProbe probe = probes.get();
        try {
            forget(probe.of("", key));
        } finally {
            probe.release();
        }
    }

    /**
     * Gives back the permits of an admitted call at once, under the key's lock, for every
     * algorithm (see {@link RateLimitStore#giveBack}): the call is taken to have been admitted
     * {@code ago} before this store's time. A key the store holds no state for has nothing to give
     * back. A sliding log looks for the call among its 1,024 newest calls.
     */
    @Override
    public void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
        RateLimitStore.check(this, key, tiers, cost);
        giveBack("", key, tiers, cost, Ago.millis(ago));
    }

    /**
     * Gives back as {@link #giveBack(String, List, long, Duration)} does, for the store key
     * {@code prefix + key}, of a request already checked: a key decided lately is found at its
     * place, as decisions find it.
     */
    void giveBack(String prefix, String key, List<Tier> tiers, long cost, long agoMillis) {
        long now = now();
        int place = placeOf(prefix, key);
        KeyState placedState = place >= 0 ? placed[place] : null;
        if (placedState != null && placedState.isKey(prefix, key) && giveBack(placedState, now, tiers, cost,
                agoMillis)) {
            return;
        }
        KeyProbe probe = probes.get();
        try {
            KeyProbe lookup = probe.of(prefix, key);
            // A state dropped while it is looked up is looked up again, a few times at most.
            for (int tries = 0; tries < 4; tries++) {
                KeyState state = policy.getIfPresentQuietly(lookup);
                if (state == null || state.dead()) {
                    state = rescued.get(lookup);
                }
                if (state == null || giveBack(state, now, tiers, cost, agoMillis)) {
                    return;
                }
            }
        } finally {
            probe.release();
        }
    }

    /** Gives back under the state's lock, unless the store dropped the state; whether it did. */
    private boolean giveBack(KeyState state, long now, List<Tier> tiers, long cost, long agoMillis) {
        state.lock();
        try {
            // A rescued state is dead until a decision takes it back, but still the key's.
            if (!state.dead() || rescued.get(state) == state) {
                state.giveBack(now, agoMillis, tiers, cost);
                return true;
            }
            return false;
        } finally {
            state.unlock();
        }
    }

    @Override
    public CompletionStage<Void> giveBackAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        return answered(() -> {
            giveBack(key, tiers, cost, ago);
            return null;
        });
    }

    /** Every algorithm, {@link Algorithm#CONCURRENCY} included. */
    @Override
    public Set<Algorithm> supportedAlgorithms() {
        return ALGORITHMS;
    }

    /** Every tier: this store gives back the permits of every algorithm. */
    @Override
    public boolean givesBack(Tier tier) {
        return true;
    }

    /**
     * Pauses a key at once, under its lock (see {@link RateLimitStore#pause}): the key's block
     * ends {@code duration} after this store's time, unless it ends later already. A paused key
     * is restricted, kept apart from a flood of other keys, until the pause ends.
     */
    @Override
    public void pause(String key, List<Tier> tiers, Duration duration) {
        RateLimitStore.check(this, key, tiers, duration);
        if (duration.isNegative() || duration.isZero()) {
            return;
        }
        long millis = Durations.ceilMillis(duration);
        long now = now();
        KeyProbe probe = probes.get();
        try {
            KeyProbe lookup = probe.of("", key);
            KeyState state = policy.getIfPresentQuietly(lookup);
            if (state != null) {
                boolean paused = false;
                boolean reweigh = false;
                boolean later = false;
                state.lock();
                try {
                    if (!state.dead()) {
                        long idleBefore = state.idleUntil();
                        state.pause(now, millis);
                        paused = true;
                        reweigh = keepApartIfRestricted(state, true);
                        later = toldIdleUntil(state.idleUntil()) > toldIdleUntil(idleBefore);
                    }
                } finally {
                    state.unlock();
                }
                if (paused) {
                    told(state, reweigh, later);
                    return;
                }
            }
            creating(lookup, now, tiers.get(0), created -> {
                created.pause(now, millis);
                keepApartIfRestricted(created, true);
            });
        } finally {
            probe.release();
        }
    }

    @Override
    public CompletionStage<Void> pauseAsync(String key, List<Tier> tiers, Duration duration) {
        return answered(() -> {
            pause(key, tiers, duration);
            return null;
        });
    }

    /** Every tier: this store pauses keys of every algorithm. */
    @Override
    public boolean pauses(Tier tier) {
        return true;
    }

    /**
     * Recounts an admitted call at once, under the key's lock (see
     * {@link RateLimitStore#recount}): the call is taken to have been admitted {@code ago} before
     * this store's time. A key the store holds no state for has no call to recount. A sliding log
     * looks for the call among its 1,024 newest calls, as a give-back does.
     */
    @Override
    public void recount(String key, List<Tier> tiers, long cost, Duration ago) {
        RateLimitStore.check(this, key, tiers, cost);
        long agoMillis = Ago.millis(ago);
        long now = now();
        KeyProbe probe = probes.get();
        try {
            KeyProbe lookup = probe.of("", key);
            // A state dropped while it is looked up is looked up again, a few times at most.
            for (int tries = 0; tries < 4; tries++) {
                KeyState state = policy.getIfPresentQuietly(lookup);
                if (state == null || state.dead()) {
                    state = rescued.get(lookup);
                }
                if (state == null) {
                    return;
                }
                boolean recounted = false;
                boolean later = false;
                state.lock();
                try {
                    // A rescued state is dead until a decision takes it back, but still the key's.
                    if (!state.dead() || rescued.get(state) == state) {
                        long idleBefore = state.idleUntil();
                        state.recount(now, agoMillis, tiers, cost);
                        recounted = true;
                        // A rescued state is kept until a decision takes it back, whatever its idle time.
                        later = !state.dead() && toldIdleUntil(state.idleUntil()) > toldIdleUntil(idleBefore);
                    }
                } finally {
                    state.unlock();
                }
                if (recounted) {
                    told(state, false, later);
                    return;
                }
            }
        } finally {
            probe.release();
        }
    }

    @Override
    public CompletionStage<Void> recountAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        return answered(() -> {
            recount(key, tiers, cost, ago);
            return null;
        });
    }

    /** Every tier: this store recounts calls of every algorithm, though only a sliding log changes. */
    @Override
    public boolean recounts(Tier tier) {
        return true;
    }

    /**
     * Tells Caffeine of a held state changed under its lock: of its new weight, if it moved in or
     * out of the restricted keys, or else of its later idle time, if it has one.
     */
    private void told(KeyState state, boolean reweigh, boolean later) {
        if (reweigh) {
            keys.asMap().compute(state, update);
        } else if (later) {
            expireLater(state);
        }
    }

    /** Forgets every key; for tests, so that one test's counts never reach the next. */
    public void clear() {
        for (Object key : keys.asMap().keySet()) {
            forget(key);
        }
        for (KeyState key : rescued.keySet()) {
            forget(key);
        }
    }

    /**
     * Drops a key's whole state, and its room among the restricted keys if it had one.
     *
     * @param lookup a state of the key, or a probe standing for it
     */
    private void forget(Object lookup) {
        keys.asMap().compute(lookup, (k, held) -> {
            discard(held);
            discard(rescued.remove(lookup));
            return null;
        });
    }

    private void discard(@Nullable KeyState state) {
        if (state != null) {
            state.lock();
            try {
                state.dead(true);
                unplace(state);
                release(state);
            } finally {
                state.unlock();
            }
        }
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        return answered(() -> tryAcquire(key, tiers, cost));
    }

    /** A stage completed at once with what {@code call} answers, or failed with what it throws. */
    private static <T> CompletionStage<T> answered(Supplier<T> call) {
        try {
            return CompletableFuture.completedFuture(call.get());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The number of keys currently held, for monitoring. Keys are dropped within about three
     * seconds of being back to their fresh state (their expiry is rounded up to a second and
     * told a second later, and Caffeine sweeps expired entries in steps of about a second).
     *
     * @return the approximate number of keys
     */
    public long estimatedKeyCount() {
        now();
        keys.cleanUp();
        return keys.estimatedSize() + rescued.size();
    }

    /**
     * One thread's means to find a key's state: it stands for the store key {@code prefix + key}
     * in a lookup, so that a decision makes no string (it has that key's hash code and equals its
     * states). It holds the caller's key only during a lookup: keys may be personal data, and a
     * caller's key may be long.
     */
    private static final class KeyProbe {

        private final SipHash hashes;
        /** The store key looked up, bounded as {@link StoreKeys#bounded} bounds keys. */
        private String prefix = "";
        private String key = "";
        private int hash;
        /** The figures of this thread's decision in progress. */
        final KeyState.Outcome outcome = new KeyState.Outcome();

        KeyProbe(SipHash hashes) {
            this.hashes = hashes;
        }

        /**
         * Stands for the store key {@code prefix + key}: those two as they are, or a
         * {@linkplain StoreKeys#digest digest} of a key too long to keep, or starting with {@code #}.
         */
        KeyProbe of(String prefix, String key) {
            boolean raw = raw(prefix, key);
            this.prefix = raw ? prefix : "";
            this.key = raw ? key : StoreKeys.digest(prefix.concat(key));
            this.hash = hashes.hash(this.prefix, this.key);
            return this;
        }

        /** Whether the store key {@code prefix + key} is kept as it is, not as a digest. */
        static boolean raw(String prefix, String key) {
            return prefix.length() + key.length() <= StoreKeys.MAX_RAW_LENGTH
                    && !(prefix.isEmpty() ? key.startsWith("#") : prefix.charAt(0) == '#');
        }

        /** Ends a lookup, letting go of the key. */
        void release() {
            if (hash != 0 || !key.isEmpty()) {
                prefix = "";
                key = "";
                hash = 0;
            }
        }

        @Override
        public boolean equals(@Nullable Object other) {
            return other instanceof KeyState state && state.isKey(prefix, key);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** Keeps a key as long as its state differs from a fresh one, and up to about two seconds longer. */
    private final class IdleExpiry implements Expiry<Object, KeyState> {

        @Override
        public long expireAfterCreate(Object key, KeyState state, long currentTime) {
            return idleNanos(state);
        }

        @Override
        public long expireAfterUpdate(Object key, KeyState state, long currentTime, long currentDuration) {
            return idleNanos(state);
        }

        /**
         * From the state's last decision until its idle time as Caffeine is told it: Caffeine
         * counts it from its own time, which runs with the clock but never back, while a key's
         * time is its own.
         */
        private long idleNanos(KeyState state) {
            return TimeUnit.MILLISECONDS.toNanos(Math.max(0, toldIdleUntil(state.idleUntil()) - state.latest()));
        }

        @Override
        public long expireAfterRead(Object key, KeyState state, long currentTime, long currentDuration) {
            return idleNanos(state);
        }
    }

    /** Configures an {@link InMemoryRateLimitStore}. Not thread-safe; build once. */
    public static final class Builder {

        private InstantSource clock = MonotonicClock.system();
        private long maximumKeys = 100_000;
        private long maximumRestrictedKeys = 100_000;

        private Builder() {
        }

        /**
         * The time source for every decision. Tests pass a clock they can move. When this clock
         * is set back by more than a second, the store carries on from the latest time it read,
         * at the clock's pace; a clock set forward moves every key forward.
         *
         * @param clock the clock; default the system clock's time at start, counted on by the
         *              JVM's monotonic timer, so that neither a step of the system clock back nor
         *              one forward reaches decisions
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The most keys held at once; beyond it the keys least likely to be used again are
         * dropped and start afresh. Each key takes about 200 bytes besides the key's own string,
         * which is held as the caller gave it (a {@code SLIDING_LOG} tier about 150 more, and 24 per
         * call in its window beyond four; calls of one cost in one millisecond share those 24).
         * The store also sets aside 4 to 8 bytes per key of this bound, up to a million keys, for
         * the table that finds keys decided lately.
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
         * The most restricted keys kept apart from the others at once: keys that are blocked, or
         * whose next call would be rejected. They are never dropped before their state is back to
         * a fresh key's, whatever the flood of other keys. Beyond this bound, further restricted
         * keys are kept like any other, within {@link #maximumKeys(long)}.
         *
         * @param maximumRestrictedKeys at least 0; default 100,000
         * @return this builder
         */
        public Builder maximumRestrictedKeys(long maximumRestrictedKeys) {
            if (maximumRestrictedKeys < 0) {
                throw new IllegalArgumentException("maximumRestrictedKeys must be at least 0, was "
                        + maximumRestrictedKeys);
            }
            this.maximumRestrictedKeys = maximumRestrictedKeys;
            return this;
        }

        /**
         * Builds the store.
         *
         * @return a new, empty store
         */
        public InMemoryRateLimitStore build() {
            return new InMemoryRateLimitStore(this);
        }
    }
}
