package dev.sluice;

/**
 * What a {@link RateLimiter} does when its store fails (Redis unreachable, a timeout): the one
 * place store outages are handled. Malformed requests ({@link IllegalArgumentException},
 * {@link UnsupportedOperationException}) are programming errors and always propagate.
 */
public enum FailurePolicy {

    /**
     * The call fails with the store's exception: nothing passes unchecked. The default, and
     * the safe choice where a limit guards money or abuse (sending codes, paid APIs).
     */
    FAIL_CLOSED,

    /**
     * The call is admitted unchecked, and the failure is logged. For limits that protect
     * capacity, where an outage of the limiter should not become an outage of the service.
     */
    FAIL_OPEN,

    /**
     * The call is decided by a store inside this JVM instead, so limits still hold per
     * instance (a shared limit is then exceeded by up to the number of instances) until the
     * store answers again.
     */
    LOCAL_FALLBACK
}
