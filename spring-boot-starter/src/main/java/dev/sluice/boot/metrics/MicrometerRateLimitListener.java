package dev.sluice.boot.metrics;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.StoreOverloadedException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records {@code sluice.decisions} (tags {@code limiter}, {@code outcome}: allowed; rejected by
 * the limits; overloaded, rejected because the store was overloaded; or error, a store failure
 * that the failure policy answered), {@code sluice.key.errors} (calls whose key or cost could
 * not be worked out; tag {@code limiter}), {@code sluice.wait} (tag {@code limiter}) and
 * {@code sluice.held} (how long calls held permits of a concurrency tier; tag {@code limiter}). Keys
 * never become tags: their number is unbounded and they may be personal data.
 */
final class MicrometerRateLimitListener implements RateLimitListener {

    private final MeterRegistry registry;
    private final Map<String, Meters> meters = new ConcurrentHashMap<>();
    private final Map<String, Timer> heldTimers = new ConcurrentHashMap<>();

    MicrometerRateLimitListener(MeterRegistry registry) {
        this.registry = registry;
    }

    /** One limiter's meters. */
    private record Meters(Counter allowed, Counter rejected, Counter overloaded, Counter error, Counter keyErrors,
                          Timer waits) {
    }

    private Meters meters(RateLimiter limiter) {
        return meters.computeIfAbsent(limiter.name(), name -> new Meters(decisions(name, "allowed"),
                decisions(name, "rejected"), decisions(name, "overloaded"), decisions(name, "error"),
                Counter.builder("sluice.key.errors").description("Calls whose key or cost could not be worked out")
                        .tag("limiter", name).register(registry),
                Timer.builder("sluice.wait").description("How long calls waited for a permit")
                        .tag("limiter", name).register(registry)));
    }

    private Counter decisions(String limiter, String outcome) {
        return Counter.builder("sluice.decisions").description("Rate-limited calls, by outcome")
                .tag("limiter", limiter).tag("outcome", outcome).register(registry);
    }

    @Override
    public void onDecision(RateLimiter limiter, String key, Decision decision) {
        Meters limiterMeters = meters(limiter);
        (decision.allowed() ? limiterMeters.allowed : limiterMeters.rejected).increment();
    }

    @Override
    public void onStoreOverloaded(RateLimiter limiter, String key, Decision decision,
                                  StoreOverloadedException overload) {
        meters(limiter).overloaded.increment();
    }

    @Override
    public void onStoreFailure(RateLimiter limiter, RuntimeException failure) {
        meters(limiter).error.increment();
    }

    @Override
    public void onKeyError(RateLimiter limiter, RuntimeException error) {
        meters(limiter).keyErrors.increment();
    }

    @Override
    public void onWait(RateLimiter limiter, Duration waited) {
        meters(limiter).waits.record(waited);
    }

    @Override
    public void onRelease(RateLimiter limiter, String key, Duration held) {
        // Only limiters with a concurrency tier release permits, and only they get the timer.
        heldTimers.computeIfAbsent(limiter.name(), name -> Timer.builder("sluice.held")
                .description("How long calls held permits of a concurrency limit").tag("limiter", name)
                .register(registry)).record(held);
    }

    /** Counted by limiter only: plan names come from the application's data, and tags must stay few. */
    @Override
    public void onUnknownPlan(RateLimiter limiter, String plan) {
        Counter.builder("sluice.plans.unknown").description("Calls naming a plan their limiter does not have, decided"
                + " by its default tiers").tag("limiter", limiter.name()).register(registry).increment();
    }
}
