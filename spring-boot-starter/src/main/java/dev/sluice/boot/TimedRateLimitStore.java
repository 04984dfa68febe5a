package dev.sluice.boot;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/** Times every decision of a store as {@code sluice.store.latency}, tagged with the store. */
final class TimedRateLimitStore implements RateLimitStore {

    private final RateLimitStore store;
    private final MeterRegistry registry;
    private final Timer latency;

    TimedRateLimitStore(RateLimitStore store, MeterRegistry registry) {
        this.store = store;
        this.registry = registry;
        this.latency = Timer.builder("sluice.store.latency")
                .description("How long the store takes to decide")
                .tag("store", name(store))
                .register(registry);
    }

    /** The store's class name, seen through this decorator. */
    static String name(RateLimitStore store) {
        return (store instanceof TimedRateLimitStore timed ? timed.store : store).getClass().getSimpleName();
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        return latency.record(() -> store.tryAcquire(key, tiers, cost));
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        Timer.Sample sample = Timer.start(registry);
        return store.tryAcquireAsync(key, tiers, cost).whenComplete((decision, failure) -> sample.stop(latency));
    }

    @Override
    public void reset(String key, List<Tier> tiers) {
        store.reset(key, tiers);
    }

    @Override
    public void clear() {
        store.clear();
    }

    @Override
    public Set<Algorithm> supportedAlgorithms() {
        return store.supportedAlgorithms();
    }

    @Override
    public boolean supports(Tier tier) {
        return store.supports(tier);
    }

    @Override
    public Optional<StoreCircuitBreaker> circuitBreaker() {
        return store.circuitBreaker();
    }
}
