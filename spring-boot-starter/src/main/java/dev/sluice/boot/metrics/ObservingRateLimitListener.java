package dev.sluice.boot.metrics;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.StoreOverloadedException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Makes each decision a Micrometer {@link Observation} named {@value #NAME}, with the limiter,
 * the outcome ({@code allowed}, {@code rejected}, {@code overloaded} or {@code error}) and the
 * binding tier ({@code <limit>/<window>}, such as {@code 3/PT1M}) as low-cardinality key values,
 * never the key: under the request's observation, a trace shows where a request was limited, and
 * Spring Boot's handlers time and count decisions by them. The observation marks the decision as
 * it is made; how long the store took is the {@code sluice.store.latency} timer.
 *
 * <p>Every call that is not admitted is observed. An admitted call is observed when it is made
 * within an observation (a traced request, say), where it takes its place in the trace: alone, an
 * observation of an admission would cost several times the decision it records (measured: about
 * 650 ns a call in a Spring Boot application became 3.3 µs), and tell no more than
 * {@code sluice.decisions}.
 */
final class ObservingRateLimitListener implements RateLimitListener {

    /** The observations' name. */
    static final String NAME = "sluice.decision";

    private final ObservationRegistry registry;

    ObservingRateLimitListener(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onDecision(RateLimiter limiter, String key, Decision decision) {
        if (!decision.allowed()) {
            observe(limiter, "rejected", decision).stop();
        } else if (registry.getCurrentObservation() != null) {
            observe(limiter, "allowed", decision).stop();
        }
    }

    @Override
    public void onStoreOverloaded(RateLimiter limiter, String key, Decision decision,
                                  StoreOverloadedException overload) {
        observe(limiter, "overloaded", decision).stop();
    }

    @Override
    public void onStoreFailure(RateLimiter limiter, RuntimeException failure) {
        observe(limiter, "error", null).error(failure).stop();
    }

    private Observation observe(RateLimiter limiter, String outcome, @Nullable Decision decision) {
        return Observation.createNotStarted(NAME, registry)
                .contextualName("rate limit " + limiter.name())
                .lowCardinalityKeyValue("limiter", limiter.name())
                .lowCardinalityKeyValue("outcome", outcome)
                .lowCardinalityKeyValue("tier", decision == null ? "none" : decision.limit() + "/" + decision.window())
                .start();
    }
}
