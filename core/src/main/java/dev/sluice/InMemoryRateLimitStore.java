package dev.sluice;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store inside the JVM: no set-up, exact, and the default. Every algorithm is supported;
 * all tiers of a key are decided under that key's lock, so decisions are exact under any
 * concurrency.
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

    private final InstantSource clock;
    private final Cache<String, KeyState> keys;
    private final long maximumRestrictedKeys;
    /** How many keys are kept apart as restricted, outside the size bound. */
    private final AtomicLong restrictedKeys = new AtomicLong();

    private InMemoryRateLimitStore(Builder builder) {
        this.clock = builder.clock;
        this.maximumRestrictedKeys = builder.maximumRestrictedKeys;
        Instant origin = clock.instant();
        // Caffeine's time must not run backwards either, or a clock set back would expire keys early.
        AtomicLong latestNanos = new AtomicLong(Long.MIN_VALUE);
        this.keys = Caffeine.newBuilder()
                // A restricted key weighs nothing, so that no flood of other keys evicts it.
                .maximumWeight(builder.maximumKeys)
                .weigher((String key, KeyState state) -> state.restrictedKept ? 0 : 1)
                .expireAfter(new IdleExpiry())
                .ticker(() -> latestNanos.accumulateAndGet(
                        Duration.between(origin, clock.instant()).toNanos(), Math::max))
                .executor(Runnable::run)
                .removalListener((String key, KeyState state, RemovalCause cause) -> {
                    if (cause.wasEvicted() && state != null && state.restrictedKept) {
                        restrictedKeys.decrementAndGet();
                    }
                })
                .build();
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
        Decision[] decision = new Decision[1];
        keys.asMap().compute(StoreKeys.bounded(key), (k, state) -> {
            KeyState keyState = state == null ? new KeyState() : state;
            // Read under the key's lock, after Caffeine judged expiry, so time never runs behind it.
            decision[0] = keyState.decide(clock.millis(), tiers, cost);
            keepApartIfRestricted(keyState, decision[0].remaining() == 0);
            return keyState;
        });
        return decision[0];
    }

    /** Moves a key in or out of the restricted keys, which weigh nothing, as long as there is room. */
    private void keepApartIfRestricted(KeyState state, boolean restricted) {
        if (restricted && !state.restrictedKept) {
            state.restrictedKept = restrictedKeys.getAndUpdate(kept -> kept < maximumRestrictedKeys ? kept + 1 : kept)
                    < maximumRestrictedKeys;
        } else if (!restricted && state.restrictedKept) {
            state.restrictedKept = false;
            restrictedKeys.decrementAndGet();
        }
    }

    @Override
    public void reset(String key, List<Tier> tiers) {
        RateLimitStore.check(this, key, tiers);
        forget(StoreKeys.bounded(key));
    }

    /** Forgets every key; for tests, so that one test's counts never reach the next. */
    @Override
    public void clear() {
        keys.asMap().keySet().forEach(this::forget);
    }

    /** Drops a key's whole state, and its room among the restricted keys if it had one. */
    private void forget(String storedKey) {
        keys.asMap().computeIfPresent(storedKey, (k, state) -> {
            if (state.restrictedKept) {
                restrictedKeys.decrementAndGet();
            }
            return null;
        });
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        try {
            return CompletableFuture.completedFuture(tryAcquire(key, tiers, cost));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The number of keys currently held, for monitoring. Keys are dropped within about a
     * second of being back to their fresh state (Caffeine sweeps expired entries in steps).
     *
     * @return the approximate number of keys
     */
    public long estimatedKeyCount() {
        keys.cleanUp();
        return keys.estimatedSize();
    }

    /** Keeps a key exactly as long as its state differs from a fresh one. */
    private static final class IdleExpiry implements Expiry<String, KeyState> {

        @Override
        public long expireAfterCreate(String key, KeyState state, long currentTime) {
            return idleNanos(state);
        }

        @Override
        public long expireAfterUpdate(String key, KeyState state, long currentTime, long currentDuration) {
            return idleNanos(state);
        }

        private static long idleNanos(KeyState state) {
            return TimeUnit.MILLISECONDS.toNanos(state.idleMillis());
        }

        @Override
        public long expireAfterRead(String key, KeyState state, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }

    /** Configures an {@link InMemoryRateLimitStore}. Not thread-safe; build once. */
    public static final class Builder {

        private InstantSource clock = InstantSource.system();
        private long maximumKeys = 100_000;
        private long maximumRestrictedKeys = 100_000;

        private Builder() {
        }

        /**
         * The time source for every decision. Tests pass a clock they can move.
         *
         * @param clock the clock; default the system clock
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The most keys held at once; beyond it the keys least likely to be used again are
         * dropped and start afresh. Each key takes a few hundred bytes (a {@code SLIDING_LOG} tier eight
         * more per permit in its window).
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
