package dev.sluice.annotation;

/**
 * What a rate-limited call does when its store cannot decide: the store is unreachable, did not
 * answer within its timeout, or its circuit breaker is open after repeated failures. Malformed
 * requests (a cost above the smallest limit, a tier the store cannot honour) are programming
 * errors and always fail the call, whatever the policy.
 *
 * <p>Chosen per limiter ({@link RateLimited#onStoreFailure()}, or
 * {@code RateLimiter.builder().onStoreFailure(...)}), with a default for all of them
 * ({@code RateLimiterRegistry.builder().onStoreFailure(...)}; Spring Boot:
 * {@code sluice.failure-policy}). The default is {@link #LOCAL_FALLBACK}: an outage of the
 * limiter's store must not become an outage of the service, and limits should still hold.
 */
public enum FailurePolicy {

    /**
     * The call is admitted unchecked. For limits that protect capacity, where nothing is lost by
     * serving a few more calls for a while.
     */
    FAIL_OPEN,

    /**
     * The call fails with {@code dev.sluice.StoreUnavailableException} (the Spring Boot starter
     * answers it with {@code 503 Service Unavailable} and a short {@code Retry-After}): nothing
     * passes unchecked. For limits that guard money or abuse, such as sending one-time codes,
     * where refusing for a while is cheaper than letting everything through.
     */
    FAIL_CLOSED,

    /**
     * The call is decided in this JVM, by an in-memory store with the same tiers, until the
     * store answers again. Every limit still holds per instance, so a limit shared by
     * {@code n} instances admits up to {@code n} times its figure meanwhile; counts made
     * locally are not carried over to the store. The default.
     */
    LOCAL_FALLBACK
}
