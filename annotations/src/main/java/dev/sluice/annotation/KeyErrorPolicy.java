package dev.sluice.annotation;

/**
 * What a rate-limited call does when its {@code key} or {@code cost} expression cannot give a
 * value: it throws (a method missing on the argument's run-time class, say) or yields
 * {@code null}, a blank key or a cost that is not a whole number of at least 1. Such calls are
 * usually missing what they are keyed by (an optional header, an absent field), so the default
 * treats them as bad requests rather than server errors.
 *
 * <p>Chosen per limiter ({@link RateLimited#onKeyError()}), with a default for all of them
 * ({@code MethodRateLimiter.builder().onKeyError(...)}; Spring Boot: {@code sluice.key-error}).
 * Whatever the policy, the limiter's listeners hear of the error (the Spring Boot starter counts
 * it as {@code sluice.key.errors}).
 */
public enum KeyErrorPolicy {

    /**
     * The call fails with {@code dev.sluice.aop.RateLimitKeyException}, naming the limiter and
     * the method, which the Spring Boot starter answers with {@code 400 Bad Request}. The
     * default.
     */
    REJECT,

    /**
     * The call is counted, at a cost of 1, under one key that every call of the limiter whose
     * expression failed shares: such calls are limited together, never unlimited.
     */
    SHARED_KEY,

    /**
     * The call goes ahead without this limiter. For limits that must never stand in a call's
     * way; the error is still counted.
     */
    SKIP
}
