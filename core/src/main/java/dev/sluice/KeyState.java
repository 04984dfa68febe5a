package dev.sluice;

import dev.sluice.internal.StoreKeys;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Everything the in-memory store keeps for one key, and the counters of one of its tiers, in
 * epoch milliseconds. A key's state counts for the first tier the key was called with (a
 * subclass per algorithm), so that a key of one tier is one object; it also holds the end of a
 * block and the states of the key's other tiers, which are instances of the same classes of which
 * only the counters are used. {@link #decide} is the reference implementation of the decision
 * rules of {@link RateLimitStore}; callers hold the key's {@link #lock}.
 *
 * <p>Counters are kept per algorithm and window, whatever tiers a call brings: every counter
 * method takes the tier's current limit (and its window), because the limit travels with each
 * call. All arithmetic is in whole numbers, so results are exact. Callers first {@link #advance}
 * a tier's counters to {@code now}; the other counter methods then read or change them at that
 * instant.
 *
 * <p>Each tier's counters also keep {@link #since}, the time a decision last found them back to
 * full: calls admitted before it no longer count there, and are not {@linkplain #giveBack given
 * back}.
 */
abstract sealed class KeyState {

    private static final int LOCKED = 1;
    private static final int DEAD = 2;
    private static final int RESTRICTED = 4;
    /** How long a caller waits between attempts to take a key's lock, in spin-wait hints. */
    private static final int PAUSES = 256;
    /** Attempts before a caller waiting for a key's lock also yields its processor. */
    private static final int SPINS = 16;
    private static final VarHandle FLAGS;
    /** Powers of 31, for the hash code of a string from those of its two parts. */
    private static final int[] POWERS_OF_31 = new int[StoreKeys.MAX_RAW_LENGTH + 1];

    static {
        POWERS_OF_31[0] = 1;
        for (int i = 1; i < POWERS_OF_31.length; i++) {
            POWERS_OF_31[i] = POWERS_OF_31[i - 1] * 31;
        }
        try {
            FLAGS = MethodHandles.lookup().findVarHandle(KeyState.class, "flags", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The counter every admitted call changes, kept next to the lock so that under contention a
     * decision moves one cache line between processors; each algorithm says what it counts.
     */
    long count;
    /** The tier whose algorithm and window these counters count for. */
    private final Tier tier;
    /** When these counters are back to full, as of the last decision that involved them. */
    private long fullAt;
    /**
     * The latest time a decision found these counters back to full, as a fresh tier's: they
     * have counted since then without a break, and count no call admitted before.
     */
    private long since;

    // The key's own state, used in the state the store keeps for the key; guarded by the lock.
    private KeyState @Nullable [] others;
    private long blockedUntil;
    private long latest = Long.MIN_VALUE;
    /** When the key's state equals a fresh one; the store's expiry reads it without the lock. */
    private volatile long idleUntil;
    /** {@link #LOCKED}, {@link #DEAD} and {@link #RESTRICTED}, in one word to keep keys small. */
    private volatile int flags;
    /**
     * The store key of the state a store keeps for a key, {@code prefix + key} (see
     * {@link #equals}); empty in every other state.
     */
    private final String prefix;
    private final String key;
    /** The store key's hash code, as the store that keeps this state hashes keys. */
    private final int hash;

    private KeyState(Tier tier, String prefix, String key, int hash) {
        this.tier = tier;
        this.prefix = prefix;
        this.key = key;
        this.hash = hash;
    }

    /**
     * Takes the key's lock. Decisions hold it for a few dozen nanoseconds and never block while
     * they do, so a caller that finds it taken spins rather than parks, which would cost far more.
     */
    final void lock() {
        int current = flags;
        if ((current & LOCKED) == 0 && FLAGS.weakCompareAndSetAcquire(this, current, current | LOCKED)) {
            return;
        }
        lockContended();
    }

    private void lockContended() {
        for (int tries = 1; ; tries++) {
            // Waiting before looking again leaves the holder its cache line, which a waiter that
            // kept reading the lock would take at every look, and lets it decide a few calls in a row.
            for (int i = 0; i < PAUSES; i++) {
                Thread.onSpinWait();
            }
            int current = flags;
            if ((current & LOCKED) == 0 && FLAGS.weakCompareAndSetAcquire(this, current, current | LOCKED)) {
                return;
            }
            if (tries >= SPINS) {
                // The holder may have lost its processor: let it run.
                Thread.yield();
            }
        }
    }

    /** Releases the key's lock. */
    final void unlock() {
        FLAGS.setRelease(this, flags & ~LOCKED);
    }

    /** Whether the store no longer holds this state, so that a decision must find the key's state again. */
    final boolean dead() {
        return (flags & DEAD) != 0;
    }

    /** The caller holds the lock. */
    final void dead(boolean dead) {
        flags = dead ? flags | DEAD : flags & ~DEAD;
    }

    /** Whether the store keeps this key apart as restricted, outside its size bound; read without the lock. */
    final boolean restrictedKept() {
        return (flags & RESTRICTED) != 0;
    }

    /** The caller holds the lock. */
    final void restrictedKept(boolean restricted) {
        flags = restricted ? flags | RESTRICTED : flags & ~RESTRICTED;
    }

    /** A fresh state counting for {@code tier}, of no store key. */
    static KeyState create(Tier tier, long now) {
        return create(tier, now, "", "", 0);
    }

    /**
     * A fresh state counting for {@code tier}, for the store key {@code prefix + key}, which is
     * at most {@link StoreKeys#MAX_RAW_LENGTH} characters long and whose hash code is {@code hash}.
     */
    static KeyState create(Tier tier, long now, String prefix, String key, int hash) {
        return switch (tier.algorithm()) {
            case FIXED_WINDOW -> new FixedWindow(tier, prefix, key, hash);
            case SLIDING_WINDOW -> new SlidingWindow(tier, prefix, key, hash);
            case SLIDING_LOG -> new SlidingLog(tier, prefix, key, hash);
            case TOKEN_BUCKET -> new TokenBucket(tier, now, prefix, key, hash);
            case CONCURRENCY -> new Concurrency(tier, prefix, key, hash);
        };
    }

    /**
     * Whether {@code other} is a state of the same store key. The in-memory store keeps each
     * key's state as its own key, so that a key costs no string of its own: the caller's key
     * is held as it is, beside the limiter's prefix.
     */
    @Override
    public final boolean equals(@Nullable Object other) {
        return other instanceof KeyState state && sameKey(prefix, key, state.prefix, state.key);
    }

    /** The hash code of the store key, as the store that keeps this state hashes it. */
    @Override
    public final int hashCode() {
        return hash;
    }

    /** Whether this state is of the store key {@code prefix + key}. */
    final boolean isKey(String prefix, String key) {
        return sameKey(this.prefix, this.key, prefix, key);
    }

    /** {@code String.hashCode} of this state's store key, from its two strings' own, which they cache. */
    final int stringHash() {
        return stringHash(prefix, key);
    }

    /**
     * {@code String.hashCode} of {@code prefix + key}, at most {@link StoreKeys#MAX_RAW_LENGTH}
     * characters, from the two strings' own, which they cache: no character is read twice.
     */
    static int stringHash(String prefix, String key) {
        return prefix.hashCode() * POWERS_OF_31[key.length()] + key.hashCode();
    }

    /** Whether {@code prefix + key} and {@code otherPrefix + otherKey} are one string, without making either. */
    static boolean sameKey(String prefix, String key, String otherPrefix, String otherKey) {
        if (prefix.length() == otherPrefix.length()) {
            // As a limiter looks its keys up; equals sees at once a caller's key that is the very string held.
            return prefix.equals(otherPrefix) && key.equals(otherKey);
        }
        if (prefix.length() + key.length() != otherPrefix.length() + otherKey.length()) {
            return false;
        }
        if (prefix.length() > otherPrefix.length()) {
            return sameKey(otherPrefix, otherKey, prefix, key);
        }
        // Then otherPrefix is prefix and the start of key, and the rest of key is otherKey.
        int middle = otherPrefix.length() - prefix.length();
        return otherPrefix.startsWith(prefix) && key.regionMatches(0, otherPrefix, prefix.length(), middle)
                && key.startsWith(otherKey, middle);
    }

    /** The time of the key's latest decision; the caller holds the lock. */
    final long latest() {
        return latest;
    }

    /** When the key's state equals a fresh one, as of the last decision. */
    final long idleUntil() {
        return idleUntil;
    }

    /**
     * Decides one call and writes the decision's figures to {@code outcome}, which makes the
     * {@link Decision} once the lock is released: the less a decision does under the lock, the
     * less calls of a busy key wait for each other. A call that does not fit now is reserved
     * when it would fit within {@code maxWaitMillis} and every tier is a token bucket (see
     * {@link RateLimitStore#reserve}).
     */
    final void decide(long clockMillis, List<Tier> tiers, long cost, long maxWaitMillis, Outcome outcome) {
        // Time never runs backwards for a key, even if the clock is set back.
        long now = Math.max(clockMillis, latest);
        // Writes only what changed: under contention each written cache line travels between processors.
        if (now != latest) {
            latest = now;
        }
        int size = tiers.size();
        // One tier, the usual case, needs no array.
        KeyState single = size == 1 ? stateFor(tiers.get(0), now) : null;
        KeyState[] current = single == null ? statesFor(tiers, now) : null;
        for (int i = 0; i < size; i++) {
            Tier tier = tiers.get(i);
            KeyState state = at(single, current, i);
            state.advance(now, tier.windowMillis(), tier.limit());
            if (state.count == 0 && state.since != now && state.isFull()) {
                state.since = now;
            }
        }

        boolean blocked = blockedUntil > now;
        boolean fits = !blocked;
        for (int i = 0; fits && i < size; i++) {
            Tier tier = tiers.get(i);
            fits = at(single, current, i).available(now, tier.windowMillis(), tier.limit()) >= cost;
        }
        if (fits) {
            for (int i = 0; i < size; i++) {
                Tier tier = tiers.get(i);
                at(single, current, i).take(now, tier.windowMillis(), tier.limit(), cost);
            }
            admitted(now, tiers, single, current, outcome);
            forgetFullStates(now);
            return;
        }
        long delay = blocked || maxWaitMillis <= 0 ? -1 : reservable(now, tiers, single, current, cost, maxWaitMillis);
        if (delay > 0) {
            for (int i = 0; i < size; i++) {
                ((TokenBucket) at(single, current, i)).reserve(tiers.get(i).windowMillis(), cost);
            }
            admitted(now, tiers, single, current, outcome);
            outcome.delay(delay);
            forgetFullStates(now);
            return;
        }
        long block = 0;
        for (int i = 0; !blocked && i < size; i++) {
            Tier tier = tiers.get(i);
            if (at(single, current, i).available(now, tier.windowMillis(), tier.limit()) < cost) {
                block = Math.max(block, tier.blockFor().toMillis());
            }
        }
        for (int i = 0; i < size; i++) {
            Tier tier = tiers.get(i);
            if (tier.countRejected()) {
                at(single, current, i).take(now, tier.windowMillis(), tier.limit(), cost);
            }
        }
        if (block > 0) {
            blockedUntil = now + block;
        }
        rejected(now, tiers, single, current, cost, outcome);
        forgetFullStates(now);
    }

    /**
     * Gives back the permits of a call of {@code cost} admitted {@code agoMillis} ago (see
     * {@link RateLimitStore#giveBack}): each of {@code tiers} whose counters have counted without
     * a break since then takes the call off as its algorithm says; a tier the key holds no
     * counters for, or whose counters were back to full since, counted no such call. Blocks
     * stay. Nothing is advanced, so that the key's time and counters move only with decisions;
     * the caller holds the lock.
     *
     * @param clockMillis the store's time
     * @param agoMillis   how long ago the call was admitted, in the key's time: a call decided
     *                    just now may have been decided at the key's time, ahead of a clock read
     *                    before it, and counted since a decision that found the key back to full then
     */
    final void giveBack(long clockMillis, long agoMillis, List<Tier> tiers, long cost) {
        long now = Math.max(clockMillis, latest);
        long admitted = now - agoMillis;
        boolean released = false;
        for (Tier tier : tiers) {
            KeyState state = heldStateFor(tier);
            if (state instanceof Concurrency) {
                // Held permits count until they are given back, whatever the clock says of when they were taken.
                state.giveBack(now, admitted, tier.windowMillis(), tier.limit(), cost);
                state.fullAt(now + state.keepMillis(state.resetMillis(now, tier.windowMillis(), tier.limit())));
                released = true;
            } else if (state != null && state.since <= admitted) {
                state.giveBack(now, admitted, tier.windowMillis(), tier.limit(), cost);
            }
        }
        if (released) {
            forgetFullStates(now);
        }
    }

    /**
     * Blocks the key for {@code millis} from now, unless it is blocked longer already (see
     * {@link RateLimitStore#pause}), and keeps the key until the block ends. Counters stay as they
     * are, and so does the key's time, which only a fresh state takes from the pause, as the Redis
     * store's pause keeps them; the caller holds the lock.
     *
     * @param clockMillis the store's time
     * @param millis      how long the key stays blocked, at least 1
     */
    final void pause(long clockMillis, long millis) {
        long now = Math.max(clockMillis, latest);
        if (latest == Long.MIN_VALUE) {
            latest = now;
        }
        blockedUntil = Math.max(blockedUntil, now + millis);
        forgetFullStates(now);
    }

    /**
     * Counts a call of {@code cost} admitted {@code agoMillis} ago as if it had been admitted now
     * (see {@link RateLimitStore#recount}): each sliding log of {@code tiers} that has counted
     * without a break since then moves the call's entry, the one a give-back would drop, to now,
     * and the key is kept until that entry leaves. Other counters hold no call times and stay as
     * they are; the caller holds the lock.
     *
     * @param clockMillis the store's time
     * @param agoMillis   how long ago the call was admitted, in the key's time (see {@link #giveBack})
     */
    final void recount(long clockMillis, long agoMillis, List<Tier> tiers, long cost) {
        // The log stays in order of time: its newest entry is never after the key's time.
        long now = Math.max(clockMillis, latest);
        long admitted = now - agoMillis;
        boolean moved = false;
        for (Tier tier : tiers) {
            KeyState state = heldStateFor(tier);
            if (state instanceof SlidingLog log && state.since <= admitted
                    && log.recount(now, admitted, tier.windowMillis(), cost)) {
                state.fullAt(now + state.resetMillis(now, tier.windowMillis(), tier.limit()));
                moved = true;
            }
        }
        if (moved) {
            if (now != latest) {
                latest = now;
            }
            forgetFullStates(now);
        }
    }

    /** The counters the key holds for {@code tier}, or none; the caller holds the lock. */
    private @Nullable KeyState heldStateFor(Tier tier) {
        if (counts(tier)) {
            return this;
        }
        KeyState[] states = others;
        if (states != null) {
            for (KeyState state : states) {
                if (state.counts(tier)) {
                    return state;
                }
            }
        }
        return null;
    }

    /**
     * Milliseconds until a call that does not fit now would, if its permits can be reserved: every
     * tier is a token bucket, the wait is within {@code maxWaitMillis}, and the debt stays within
     * {@link TokenBucket#MOST_MISSING}; otherwise -1.
     */
    private static long reservable(long now, List<Tier> tiers, @Nullable KeyState single, KeyState @Nullable [] current,
                                   long cost, long maxWaitMillis) {
        long wait = 0;
        for (int i = 0; i < tiers.size(); i++) {
            Tier tier = tiers.get(i);
            if (!(at(single, current, i) instanceof TokenBucket bucket)
                    || bucket.count > TokenBucket.MOST_MISSING - cost * tier.windowMillis()) {
                return -1;
            }
            wait = Math.max(wait, bucket.waitMillis(now, tier.windowMillis(), tier.limit(), cost));
        }
        return wait <= maxWaitMillis ? wait : -1;
    }

    private static KeyState at(@Nullable KeyState single, KeyState @Nullable [] current, int i) {
        return single != null ? single : current[i];
    }

    /**
     * The state counting for {@code tier}, found by algorithm and window, or started; the caller
     * holds the lock.
     */
    final KeyState stateFor(Tier tier, long now) {
        KeyState held = heldStateFor(tier);
        if (held != null) {
            return held;
        }
        KeyState[] states = others;
        KeyState started = create(tier, now);
        KeyState[] grown = states == null ? new KeyState[1] : Arrays.copyOf(states, states.length + 1);
        grown[grown.length - 1] = started;
        others = grown;
        return started;
    }

    private KeyState[] statesFor(List<Tier> tiers, long now) {
        KeyState[] current = new KeyState[tiers.size()];
        for (int i = 0; i < current.length; i++) {
            current[i] = stateFor(tiers.get(i), now);
        }
        return current;
    }

    private boolean counts(Tier other) {
        return tier == other || tier.sharesStateWith(other);
    }

    /**
     * Drops the other tiers' states that are back to full, which equal fresh ones, and works out
     * when the whole key is.
     */
    private void forgetFullStates(long now) {
        long idle = Math.max(blockedUntil, fullAt);
        KeyState[] states = others;
        if (states != null) {
            int kept = 0;
            for (KeyState state : states) {
                if (state.fullAt > now) {
                    kept++;
                    idle = Math.max(idle, state.fullAt);
                }
            }
            if (kept < states.length) {
                KeyState[] keptStates = kept == 0 ? null : new KeyState[kept];
                for (int i = 0, j = 0; keptStates != null && i < states.length; i++) {
                    if (states[i].fullAt > now) {
                        keptStates[j++] = states[i];
                    }
                }
                others = keptStates;
            }
        }
        if (idle != idleUntil) {
            idleUntil = idle;
        }
    }

    private static void admitted(long now, List<Tier> tiers, @Nullable KeyState single,
                                 KeyState @Nullable [] current, Outcome outcome) {
        // The binding tier: the fewest permits left; of those, the one that takes longest to reset.
        int tightest = 0;
        long fewest = Long.MAX_VALUE;
        long longestReset = -1;
        for (int i = 0; i < tiers.size(); i++) {
            Tier tier = tiers.get(i);
            long limit = tier.limit();
            long window = tier.windowMillis();
            KeyState state = at(single, current, i);
            long left = remaining(now, window, limit, state);
            long reset = state.resetMillis(now, window, limit);
            state.fullAt(now + state.keepMillis(reset));
            if (left < fewest || (left == fewest && reset > longestReset)) {
                tightest = i;
                fewest = left;
                longestReset = reset;
            }
        }
        outcome.set(true, tiers.get(tightest), fewest, longestReset, 0);
    }

    private void rejected(long now, List<Tier> tiers, @Nullable KeyState single, KeyState @Nullable [] current,
                          long cost, Outcome outcome) {
        // The binding tier: the rejecting tier with the longest wait; when only a block rejects
        // the call, the tier with the fewest permits left, as for an admitted call.
        int waiting = -1;
        long wait = 0;
        int tightest = 0;
        long fewest = Long.MAX_VALUE;
        long longestReset = -1;
        for (int i = 0; i < tiers.size(); i++) {
            Tier tier = tiers.get(i);
            long limit = tier.limit();
            long window = tier.windowMillis();
            KeyState state = at(single, current, i);
            long left = remaining(now, window, limit, state);
            long reset = state.resetMillis(now, window, limit);
            state.fullAt(now + state.keepMillis(reset));
            long tierWait = state.waitMillis(now, window, limit, cost);
            if (tierWait > wait) {
                wait = tierWait;
                waiting = i;
            }
            if (left < fewest || (left == fewest && reset > longestReset)) {
                tightest = i;
                fewest = left;
                longestReset = reset;
            }
        }
        int binding = waiting >= 0 ? waiting : tightest;
        Tier tier = tiers.get(binding);
        long limit = tier.limit();
        long window = tier.windowMillis();
        KeyState state = at(single, current, binding);
        long blockLeft = Math.max(0, blockedUntil - now);
        long remaining = blockLeft > 0 ? 0 : remaining(now, window, limit, state);
        long reset = Math.max(blockLeft, state.resetMillis(now, window, limit));
        outcome.set(false, tier, remaining, reset, Math.max(blockLeft, wait));
    }

    private void fullAt(long time) {
        if (fullAt != time) {
            fullAt = time;
        }
    }

    private static long remaining(long now, long window, long limit, KeyState state) {
        return Math.max(0, Math.min(limit, state.available(now, window, limit)));
    }

    /** The figures of a decision, made into a {@link Decision} outside the key's lock. Reused by a thread. */
    static final class Outcome {
        private boolean allowed;
        private @Nullable Tier binding;
        private long remaining;
        private long resetMillis;
        private long retryMillis;
        private long delayMillis;

        void set(boolean allowed, Tier binding, long remaining, long resetMillis, long retryMillis) {
            this.allowed = allowed;
            this.binding = binding;
            this.remaining = remaining;
            this.resetMillis = resetMillis;
            this.retryMillis = retryMillis;
            this.delayMillis = 0;
        }

        /** Makes the admitted call a reservation, due after {@code delayMillis}. */
        void delay(long delayMillis) {
            this.delayMillis = delayMillis;
        }

        long remaining() {
            return remaining;
        }

        Decision decision() {
            Tier tier = binding;
            binding = null;
            return new Decision(allowed, tier.limit(), remaining, Durations.ofMillis(resetMillis),
                    Durations.ofMillis(retryMillis), tier.isConcurrency() ? Duration.ZERO : tier.window(),
                    tier.isConcurrency());
        }

        Reservation reservation() {
            return new Reservation(decision(), Durations.ofMillis(delayMillis));
        }
    }

    /** Moves the counters forward to {@code now}: rolls windows, drops old entries, refills. */
    abstract void advance(long now, long window, long limit);

    /** Permits the tier admits now; negative when rejected calls were counted past the limit. */
    abstract long available(long now, long window, long limit);

    /** Counts {@code cost} permits taken now. */
    abstract void take(long now, long window, long limit, long cost);

    /** Milliseconds until a call of {@code cost} fits; zero when it fits now. */
    abstract long waitMillis(long now, long window, long limit, long cost);

    /** Milliseconds until the tier is back to its full limit; zero when it is. */
    abstract long resetMillis(long now, long window, long limit);

    /** Whether the counters, advanced, equal a fresh tier's: nothing counted. */
    abstract boolean isFull();

    /**
     * Milliseconds the counters must be kept for, given {@link #resetMillis}: until they are back
     * to full, which is when they equal fresh ones.
     */
    long keepMillis(long resetMillis) {
        return resetMillis;
    }

    /**
     * Takes back a call of {@code cost} admitted at {@code admitted}, if these counters still count
     * it, without advancing them: a window takes the cost off the window the call was counted in
     * while that window counts, a sliding log drops one entry of the call, a bucket gets back what
     * of the cost it has not refilled since.
     */
    abstract void giveBack(long now, long admitted, long window, long limit, long cost);

    /** {@code ceil(dividend / divisor)} for a positive divisor ({@code Math.ceilDiv} is Java 18). */
    static long ceilDiv(long dividend, long divisor) {
        return -Math.floorDiv(-dividend, divisor);
    }

    static long windowStart(long now, long window) {
        return now - Math.floorMod(now, window);
    }

    /**
     * A window tier's counters: the current window's count ({@link #count}), from {@link #start};
     * {@link LocalSyncRateLimitStore} reads them to send what it admitted and sets them to what
     * all instances together counted.
     */
    abstract static sealed class WindowCounter extends KeyState {
        long start = Long.MIN_VALUE;

        private WindowCounter(Tier tier, String prefix, String key, int hash) {
            super(tier, prefix, key, hash);
        }

        /** The start of the current window, after {@link #advance}. */
        final long start() {
            return start;
        }

        /** The current window's count. */
        final long current() {
            return count;
        }

        /** The previous window's count; zero for a fixed window, which forgets it. */
        long previous() {
            return 0;
        }

        /** Sets the counts, the current window starting at {@code start}. */
        void counts(long start, long current, long previous) {
            this.start = start;
            this.count = current;
        }
    }

    /** {@code FIXED_WINDOW}: one counter per epoch-aligned window, {@link #count}. */
    static final class FixedWindow extends WindowCounter {

        FixedWindow(Tier tier, String prefix, String key, int hash) {
            super(tier, prefix, key, hash);
        }

        @Override
        void advance(long now, long window, long limit) {
            long elapsed = now - start;
            // Within the current window no division is needed.
            if (start != Long.MIN_VALUE && elapsed >= 0 && elapsed < window) {
                return;
            }
            start = windowStart(now, window);
            count = 0;
        }

        @Override
        long available(long now, long window, long limit) {
            return limit - count;
        }

        @Override
        void take(long now, long window, long limit, long cost) {
            // Counted rejections past the limit change no decision beyond one more window's worth.
            count = Math.min(2 * limit, count + cost);
        }

        @Override
        long waitMillis(long now, long window, long limit, long cost) {
            return count + cost <= limit ? 0 : start + window - now;
        }

        @Override
        long resetMillis(long now, long window, long limit) {
            return count == 0 ? 0 : start + window - now;
        }

        @Override
        boolean isFull() {
            return count == 0;
        }

        @Override
        void giveBack(long now, long admitted, long window, long limit, long cost) {
            long counted = windowStart(admitted, window);
            // The call's window counts until its end; after it the counters no longer hold it.
            if (start == counted && now - counted < window) {
                count = Math.max(0, count - cost);
            }
        }
    }

    /**
     * {@code SLIDING_WINDOW}: the current window's count ({@link #count}) plus the previous
     * window's, weighted by the share of it the sliding window still covers, rounded up.
     */
    static final class SlidingWindow extends WindowCounter {
        private long previous;

        SlidingWindow(Tier tier, String prefix, String key, int hash) {
            super(tier, prefix, key, hash);
        }

        @Override
        void advance(long now, long window, long limit) {
            long elapsed = now - start;
            // Within the current window no division is needed.
            if (start != Long.MIN_VALUE && elapsed >= 0 && elapsed < window) {
                return;
            }
            long aligned = windowStart(now, window);
            previous = aligned - window == start ? count : 0;
            count = 0;
            start = aligned;
        }

        private long weighted(long now, long window) {
            if (previous == 0) {
                return count;
            }
            long left = window - (now - start);
            return ceilDiv(previous * left, window) + count;
        }

        @Override
        long available(long now, long window, long limit) {
            return limit - weighted(now, window);
        }

        @Override
        void take(long now, long window, long limit, long cost) {
            // Counted rejections may run up to one more window's worth, as a token bucket's debt.
            count = Math.min(2 * limit, count + cost);
        }

        @Override
        long waitMillis(long now, long window, long limit, long cost) {
            if (weighted(now, window) + cost <= limit) {
                return 0;
            }
            long elapsed = now - start;
            long roomNow = limit - count - cost;
            if (roomNow >= 0) {
                // Within this window: wait until previous * (window - elapsed) / window <= roomNow.
                return window - Math.floorDiv(roomNow * window, previous) - elapsed;
            }
            // Next window: this window's count becomes the previous one and decays from there.
            long roomNext = limit - cost;
            long elapsedNext = count == 0 ? 0 : window - Math.floorDiv(roomNext * window, count);
            return window - elapsed + elapsedNext;
        }

        @Override
        long resetMillis(long now, long window, long limit) {
            long left = window - (now - start);
            return count > 0 ? left + window : previous > 0 ? left : 0;
        }

        @Override
        boolean isFull() {
            return count == 0 && previous == 0;
        }

        @Override
        void giveBack(long now, long admitted, long window, long limit, long cost) {
            long counted = windowStart(admitted, window);
            // The call's window counts until the end of the next one, as the current or the previous window.
            if (now - counted >= 2 * window) {
                return;
            }
            if (start == counted) {
                count = Math.max(0, count - cost);
            } else if (start == counted + window) {
                previous = Math.max(0, previous - cost);
            }
        }

        @Override
        long previous() {
            return previous;
        }

        @Override
        void counts(long start, long current, long previous) {
            super.counts(start, current, previous);
            this.previous = previous;
        }
    }

    /**
     * {@code SLIDING_LOG}: the permits taken in the last window, as entries oldest first, and their
     * total ({@link #count}). The Redis store keeps an entry per call; here calls of one cost in
     * one millisecond, one after the other, share an entry: its time, the calls' cost and their
     * permits. A call of any cost adds at most one entry. At most {@code limit} permits are kept:
     * when rejected calls are counted, the newest permits decide every figure, so the oldest
     * calls go, and the oldest call left may keep part of its cost, as an entry of its own.
     */
    static final class SlidingLog extends KeyState {
        /**
         * The most calls a give-back looks at, newest first, for the one to give back: it gives
         * back nothing rather than search further.
         */
        static final int GIVE_BACK_SEARCH = 1_024;

        private long[] times = new long[4];
        /** Each entry's cost of one call. */
        private long[] costs = new long[4];
        /** Each entry's permits: its calls' cost times their number. */
        private long[] permits = new long[4];
        private int head;
        private int size;

        SlidingLog(Tier tier, String prefix, String key, int hash) {
            super(tier, prefix, key, hash);
        }

        private int slot(int index) {
            return (head + index) % times.length;
        }

        @Override
        void advance(long now, long window, long limit) {
            // An entry exactly one window old no longer counts.
            while (size > 0 && times[head] <= now - window) {
                count -= permits[head];
                dropOldest();
            }
        }

        private void dropOldest() {
            head = (head + 1) % times.length;
            size--;
        }

        @Override
        long available(long now, long window, long limit) {
            return limit - count;
        }

        @Override
        void take(long now, long window, long limit, long cost) {
            append(now, cost);
            count += cost;
            // Each turn drops an entry or ends: at most as many turns as the log has entries.
            while (count > limit && size > 0) {
                long excess = count - limit;
                if (permits[head] <= excess) {
                    count -= permits[head];
                    dropOldest();
                    continue;
                }
                // The oldest calls that the excess covers go whole; the next keeps what is left of its cost.
                long callCost = costs[head];
                long whole = excess / callCost;
                long part = excess - whole * callCost;
                permits[head] -= whole * callCost;
                count = limit;
                if (part > 0) {
                    permits[head] -= callCost;
                    if (permits[head] == 0) {
                        set(head, times[head], callCost - part, callCost - part);
                    } else {
                        prepend(times[head], callCost - part);
                    }
                }
            }
        }

        /** Adds a call as the newest entry, or to the newest entry if it has the same time and cost. */
        private void append(long now, long cost) {
            int newest = slot(size - 1);
            if (size > 0 && times[newest] == now && costs[newest] == cost) {
                permits[newest] += cost;
            } else {
                if (size == times.length) {
                    grow();
                }
                set(slot(size), now, cost, cost);
                size++;
            }
        }

        private void set(int slot, long time, long cost, long entryPermits) {
            times[slot] = time;
            costs[slot] = cost;
            permits[slot] = entryPermits;
        }

        /** Adds an entry of one call before the oldest. */
        private void prepend(long time, long cost) {
            if (size == times.length) {
                grow();
            }
            head = (head - 1 + times.length) % times.length;
            set(head, time, cost, cost);
            size++;
        }

        private void grow() {
            long[] grownTimes = new long[2 * times.length];
            long[] grownCosts = new long[2 * times.length];
            long[] grownPermits = new long[2 * times.length];
            for (int i = 0; i < size; i++) {
                grownTimes[i] = times[slot(i)];
                grownCosts[i] = costs[slot(i)];
                grownPermits[i] = permits[slot(i)];
            }
            times = grownTimes;
            costs = grownCosts;
            permits = grownPermits;
            head = 0;
        }

        @Override
        long waitMillis(long now, long window, long limit, long cost) {
            long excess = count + cost - limit;
            if (excess <= 0) {
                return 0;
            }
            // The call fits once the oldest permits, up to the excess, have left the window.
            long leaving = 0;
            for (int i = 0; i < size; i++) {
                leaving += permits[slot(i)];
                if (leaving >= excess) {
                    return times[slot(i)] + window - now;
                }
            }
            // Only a call costing more than the limit, which no tier admits, gets here: it waits
            // for the whole log to leave, and then still does not fit.
            return size == 0 ? window : times[slot(size - 1)] + window - now;
        }

        @Override
        long resetMillis(long now, long window, long limit) {
            return size == 0 ? 0 : times[slot(size - 1)] + window - now;
        }

        @Override
        boolean isFull() {
            return size == 0;
        }

        /**
         * Drops one call of the same cost admitted no later than {@code admitted}: the newest such
         * call among the {@value #GIVE_BACK_SEARCH} newest calls that still count. None of them
         * is that call's when none is found, so nothing is given back.
         */
        @Override
        void giveBack(long now, long admitted, long window, long limit, long cost) {
            int index = find(now, admitted, window, cost);
            if (index >= 0) {
                takeOut(index, cost);
                count -= cost;
            }
        }

        /**
         * Moves the call a give-back would drop to {@code now}, which is no earlier than any entry:
         * out of its entry, which may hold other calls of its millisecond, into the newest.
         *
         * @return whether the call was found and moved
         */
        boolean recount(long now, long admitted, long window, long cost) {
            int index = find(now, admitted, window, cost);
            if (index < 0 || times[slot(index)] == now) {
                return false;
            }
            takeOut(index, cost);
            append(now, cost);
            return true;
        }

        /**
         * The index of the entry holding the newest call of {@code cost} admitted no later than
         * {@code admitted} among the {@value #GIVE_BACK_SEARCH} newest calls that still count;
         * -1 when there is none.
         */
        private int find(long now, long admitted, long window, long cost) {
            long seen = 0;
            for (int i = size - 1; i >= 0 && seen < GIVE_BACK_SEARCH; i--) {
                int slot = slot(i);
                if (times[slot] <= now - window) {
                    // This entry and every older one no longer count.
                    return -1;
                }
                if (times[slot] <= admitted && costs[slot] == cost) {
                    return i;
                }
                seen += permits[slot] / costs[slot];
            }
            return -1;
        }

        /** Takes one call of {@code cost} out of the entry at {@code index}, and the entry out if it is left empty. */
        private void takeOut(int index, long cost) {
            int slot = slot(index);
            permits[slot] -= cost;
            if (permits[slot] == 0) {
                remove(index);
            }
        }

        /** Removes the entry at {@code index}: the newer ones, fewer than the calls a give-back looks at, move down. */
        private void remove(int index) {
            for (int i = index; i < size - 1; i++) {
                int to = slot(i);
                int from = slot(i + 1);
                set(to, times[from], costs[from], permits[from]);
            }
            size--;
        }
    }

    /**
     * {@code TOKEN_BUCKET}, kept as the tokens missing from a full bucket ({@link #count}), in
     * units of 1/window: a bucket refills by exactly {@code limit} units a millisecond and holds
     * {@code limit × window} units. A fresh key is a full bucket, and a changed limit keeps the
     * tokens taken, as the counters of the other algorithms keep their counts. Counted
     * rejections may run the bucket into debt, at most one more full bucket; reservations as far
     * as their callers wait.
     */
    static final class TokenBucket extends KeyState {
        /** The most units a bucket may miss, so that every figure is exact in a Lua number too. */
        static final long MOST_MISSING = 1L << 53;

        private long refilledAt;

        TokenBucket(Tier tier, long now, String prefix, String key, int hash) {
            super(tier, prefix, key, hash);
            this.refilledAt = now;
        }

        @Override
        void advance(long now, long window, long limit) {
            if (now == refilledAt) {
                return;
            }
            long elapsed = now - refilledAt;
            // Compared before multiplying, which could overflow after a long idle time.
            count = elapsed >= ceilDiv(count, limit) ? 0 : count - elapsed * limit;
            refilledAt = now;
        }

        @Override
        long available(long now, long window, long limit) {
            return limit - ceilDiv(count, window);
        }

        @Override
        void take(long now, long window, long limit, long cost) {
            // Never lessens a debt that reservations ran deeper.
            count = Math.max(count, Math.min(2 * limit * window, count + cost * window));
        }

        /** Takes {@code cost} permits due later: the bucket runs into debt. */
        void reserve(long window, long cost) {
            count += cost * window;
        }

        @Override
        long waitMillis(long now, long window, long limit, long cost) {
            long excess = count + cost * window - limit * window;
            return excess <= 0 ? 0 : ceilDiv(excess, limit);
        }

        @Override
        long resetMillis(long now, long window, long limit) {
            return ceilDiv(count, limit);
        }

        @Override
        boolean isFull() {
            return count == 0;
        }

        /**
         * Gets back what of the call's tokens the bucket has not refilled since it was admitted:
         * never more than the call took, never above capacity. Refilled as of the later of now and
         * the bucket's own time, which a clock set back leaves ahead.
         */
        @Override
        void giveBack(long now, long admitted, long window, long limit, long cost) {
            long elapsed = Math.max(now, refilledAt) - admitted;
            long taken = cost * window;
            // Compared before multiplying, which could overflow after a long time.
            if (elapsed < ceilDiv(taken, limit)) {
                count = Math.max(0, count - (taken - elapsed * limit));
            }
        }
    }

    /**
     * {@code CONCURRENCY}: the permits held ({@link #count}), taken when calls are admitted and
     * given back when they end. Nothing moves with time, so the counters are kept for as long as
     * any permit is held. How long a rejected call should wait is not known: it is told to try
     * again after {@link #RETRY_MILLIS}.
     */
    static final class Concurrency extends KeyState {

        /** The wait a call rejected for want of a free permit is told of; stores that can tell better do. */
        static final long RETRY_MILLIS = 10;

        Concurrency(Tier tier, String prefix, String key, int hash) {
            super(tier, prefix, key, hash);
        }

        @Override
        void advance(long now, long window, long limit) {
        }

        @Override
        long available(long now, long window, long limit) {
            return limit - count;
        }

        @Override
        void take(long now, long window, long limit, long cost) {
            count += cost;
        }

        @Override
        long waitMillis(long now, long window, long limit, long cost) {
            return count + cost <= limit ? 0 : RETRY_MILLIS;
        }

        @Override
        long resetMillis(long now, long window, long limit) {
            return count == 0 ? 0 : RETRY_MILLIS;
        }

        @Override
        long keepMillis(long resetMillis) {
            return count == 0 ? 0 : Tier.MAX_LIMIT_TIMES_WINDOW_MILLIS;
        }

        @Override
        boolean isFull() {
            return count == 0;
        }

        @Override
        void giveBack(long now, long admitted, long window, long limit, long cost) {
            count = Math.max(0, count - cost);
        }
    }
}
