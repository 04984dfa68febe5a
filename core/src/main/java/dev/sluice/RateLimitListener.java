package dev.sluice;

import java.time.Duration;

/**
 * Observes what a {@link RateLimiter} decides: for metrics, rate-limit response headers or an
 * audit trail. Called on the deciding thread; implementations are quick and never throw.
 */
public interface RateLimitListener {

    /**
     * The outcome of one call: the admitting decision, or the rejecting one (for a call that
     * waited, the last). Not called when the store failed and the failure propagates. A call
     * the store refused because it was overloaded is reported through
     * {@link #onStoreOverloaded}, which calls this unless overridden.
     *
     * @param limiter  the limiter
     * @param key      the key the call was counted for (personal data: do not log it lightly)
     * @param decision the decision
     */
    default void onDecision(RateLimiter limiter, String key, Decision decision) {
    }

    /**
     * The outcome of a call the store refused because it was overloaded
     * ({@link StoreOverloadedException}): a rejection, with the tightest tier's figures, nothing
     * remaining and the store's {@code retryAfter}, that the store did not count. Called instead of
     * {@link #onDecision} for such an outcome (for a call that waited, when the last refusal was
     * the store's); by default it calls {@link #onDecision}, so that a listener not overriding it
     * sees a rejection like any other. An overload is not a store failure:
     * {@link #onStoreFailure} is not called for it.
     *
     * @param limiter  the limiter
     * @param key      the key the call was for (personal data: do not log it lightly)
     * @param decision the rejecting decision the limiter made
     * @param overload what the store threw
     */
    default void onStoreOverloaded(RateLimiter limiter, String key, Decision decision,
                                   StoreOverloadedException overload) {
        onDecision(limiter, key, decision);
    }

    /**
     * The store failed; the limiter's {@link dev.sluice.annotation.FailurePolicy} applies next.
     *
     * @param limiter the limiter
     * @param failure what the store threw
     */
    default void onStoreFailure(RateLimiter limiter, RuntimeException failure) {
    }

    /**
     * A call waited for a permit ({@code onLimit = WAIT}) before it was admitted or rejected.
     *
     * @param limiter the limiter
     * @param waited  the time between the first decision and the last, on the limiter's clock
     */
    default void onWait(RateLimiter limiter, Duration waited) {
    }

    /**
     * A call that held permits of a concurrency tier ended and released them.
     *
     * @param limiter the limiter
     * @param key     the call's key
     * @param held    how long it held them, on the limiter's clock
     */
    default void onRelease(RateLimiter limiter, String key, Duration held) {
    }

    /**
     * A call's key or cost could not be worked out (an expression threw, or gave no usable
     * value); the limiter's key-error policy applies next.
     *
     * @param limiter the limiter
     * @param error   what went wrong, without any value
     */
    default void onKeyError(RateLimiter limiter, RuntimeException error) {
    }

    /**
     * A call named a plan the limiter does not have; the limiter's default tiers decide it.
     *
     * @param limiter the limiter
     * @param plan    the plan named
     */
    default void onUnknownPlan(RateLimiter limiter, String plan) {
    }
}
