package dev.sluice;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A store that fails while it is down, and otherwise decides, resets, gives back, pauses and recounts in memory. */
final class SwitchableStore extends ForwardingRateLimitStore {

    /** Whether calls reach the store; when not, they fail with {@link StoreUnavailableException}. */
    volatile boolean up = true;

    SwitchableStore(RateLimitStore delegate) {
        super(delegate);
    }

    private void reachable() {
        if (!up) {
            throw new StoreUnavailableException("down", Duration.ofSeconds(1));
        }
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        reachable();
        return super.tryAcquire(key, tiers, cost);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        try {
            return CompletableFuture.completedFuture(tryAcquire(key, tiers, cost));
        } catch (StoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void reset(String key, List<Tier> tiers) {
        reachable();
        super.reset(key, tiers);
    }

    @Override
    public void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
        reachable();
        super.giveBack(key, tiers, cost, ago);
    }

    @Override
    public CompletionStage<Void> giveBackAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        try {
            reachable();
        } catch (StoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
        return super.giveBackAsync(key, tiers, cost, ago);
    }

    @Override
    public void pause(String key, List<Tier> tiers, Duration duration) {
        reachable();
        super.pause(key, tiers, duration);
    }

    @Override
    public CompletionStage<Void> pauseAsync(String key, List<Tier> tiers, Duration duration) {
        try {
            reachable();
        } catch (StoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
        return super.pauseAsync(key, tiers, duration);
    }

    @Override
    public void recount(String key, List<Tier> tiers, long cost, Duration ago) {
        reachable();
        super.recount(key, tiers, cost, ago);
    }

    @Override
    public CompletionStage<Void> recountAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        try {
            reachable();
        } catch (StoreUnavailableException e) {
            return CompletableFuture.failedFuture(e);
        }
        return super.recountAsync(key, tiers, cost, ago);
    }
}
