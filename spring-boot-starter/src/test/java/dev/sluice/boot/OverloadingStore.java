package dev.sluice.boot;

import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.Reservation;
import dev.sluice.StoreOverloadedException;
import dev.sluice.StoreQueue;
import dev.sluice.Tier;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory store behind a queue of {@value #CAPACITY} decisions, which is full while
 * {@link #overloaded} is set: then every decision is refused with {@link StoreOverloadedException}
 * and a {@code retryAfter} of {@link #RETRY_AFTER}, as the Redis store refuses them under its
 * {@code reject} overload policy.
 * Public for the tests of each of the starter's packages.
 */
public final class OverloadingStore extends ForwardingRateLimitStore {

    public static final int CAPACITY = 20_000;
    public static final Duration RETRY_AFTER = Duration.ofMillis(300);

    /** Whether the queue is full. */
    public final AtomicBoolean overloaded = new AtomicBoolean();
    private final AtomicLong refused = new AtomicLong();
    private final StoreQueue queue = new StoreQueue() {
        @Override
        public int queued() {
            return overloaded.get() ? CAPACITY : 0;
        }

        @Override
        public int capacity() {
            return CAPACITY;
        }

        @Override
        public long overloaded() {
            return refused.get();
        }
    };

    public OverloadingStore() {
        super(InMemoryRateLimitStore.builder().build());
    }

    private void refuseWhenFull() {
        if (overloaded.get()) {
            refused.incrementAndGet();
            throw new StoreOverloadedException(CAPACITY + " decisions queued", RETRY_AFTER);
        }
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        refuseWhenFull();
        return super.tryAcquire(key, tiers, cost);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        try {
            refuseWhenFull();
        } catch (StoreOverloadedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return super.tryAcquireAsync(key, tiers, cost);
    }

    @Override
    public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
        refuseWhenFull();
        return super.reserve(key, tiers, cost, maxWait);
    }

    @Override
    public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
        try {
            refuseWhenFull();
        } catch (StoreOverloadedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return super.reserveAsync(key, tiers, cost, maxWait);
    }

    @Override
    public Optional<StoreQueue> queue() {
        return Optional.of(queue);
    }
}
