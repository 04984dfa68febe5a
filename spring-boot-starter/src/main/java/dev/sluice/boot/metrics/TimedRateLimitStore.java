package dev.sluice.boot.metrics;

import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.Reservation;
import dev.sluice.Tier;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * Times the decisions of a store as {@code sluice.store.latency}, tagged with the store, and
 * forwards everything else.
 *
 * <p>Limiters decide with an {@link dev.sluice.InMemoryRateLimitStore} beneath this one
 * directly, in a few dozen nanoseconds: about what timing a decision costs. Of those decisions
 * one in {@value #IN_MEMORY_SAMPLE} is timed (and the first), so that metrics do not double the
 * cost of a call; {@code sluice.decisions} counts them all. Every decision of any other store,
 * and every asynchronous one, is timed.
 */
final class TimedRateLimitStore extends ForwardingRateLimitStore {

    /** One decision made directly with the in-memory store in this many is timed. */
    static final int IN_MEMORY_SAMPLE = 64;

    private final MeterRegistry registry;
    private final Timer latency;
    private final DecisionObserver sampled = new Sampled();
    /** Whether a decision made directly was timed yet; racy on purpose, a second first one does no harm. */
    private boolean timedDirectly;

    TimedRateLimitStore(RateLimitStore store, MeterRegistry registry) {
        super(store);
        this.registry = registry;
        this.latency = Timer.builder("sluice.store.latency")
                .description("How long the store takes to decide")
                .tag("store", name(store))
                // Buckets up to 5 s (about 60), for percentiles in Prometheus and the alert on the 99th.
                .publishPercentileHistogram()
                .maximumExpectedValue(Duration.ofSeconds(5))
                .register(registry);
    }

    /**
     * The class name of the store beneath any decorators, such as this one: the metrics' tag
     * {@code store}, which the actuator's endpoint and health component name the store by too.
     */
    static String name(RateLimitStore store) {
        return ForwardingRateLimitStore.beneath(store).getClass().getSimpleName();
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        return latency.record(() -> super.tryAcquire(key, tiers, cost));
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        Timer.Sample sample = Timer.start(registry);
        return super.tryAcquireAsync(key, tiers, cost).whenComplete((decision, failure) -> sample.stop(latency));
    }

    @Override
    public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
        return latency.record(() -> super.reserve(key, tiers, cost, maxWait));
    }

    @Override
    public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
        Timer.Sample sample = Timer.start(registry);
        return super.reserveAsync(key, tiers, cost, maxWait).whenComplete((reserved, failure) -> sample.stop(latency));
    }

    /**
     * Times a sample of the decisions limiters make directly with the in-memory store beneath
     * this one: timing changes no decision. (Limiters make none over any other store.)
     */
    @Override
    protected DecisionObserver decisionObserver() {
        return sampled;
    }

    /** Times one decision in {@value #IN_MEMORY_SAMPLE}, and the first. */
    private final class Sampled implements DecisionObserver {

        @Override
        public Timer.@Nullable Sample deciding() {
            if (timedDirectly && ThreadLocalRandom.current().nextInt(IN_MEMORY_SAMPLE) != 0) {
                return null;
            }
            timedDirectly = true;
            return Timer.start(registry);
        }

        @Override
        public void decided(@Nullable Object deciding) {
            if (deciding != null) {
                ((Timer.Sample) deciding).stop(latency);
            }
        }
    }
}
