package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * A store had more decisions waiting than it can answer in time, and refused this one without
 * asking its backend: a spike, not an outage. It never opens a circuit breaker and no failure
 * policy applies to it; a {@link RateLimiter} answers it as a rejection (the Spring Boot starter
 * answers {@code 429 Too Many Requests} with {@code Retry-After}), and a caller that may wait for
 * its permit tries again after {@link #retryAfter()}. Stores throw it (or fail their asynchronous
 * stage with it) only under {@link OverloadPolicy#REJECT}.
 *
 * <p>Thrown for every call of a spike, so it carries no stack trace; the message names no key.
 */
public class StoreOverloadedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final Duration retryAfter;

    /**
     * Creates the exception a store throws.
     *
     * @param message    what was refused, without any key
     * @param retryAfter when the call is worth trying again; positive
     */
    public StoreOverloadedException(String message, Duration retryAfter) {
        super(message, null, false, false);
        this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
        if (retryAfter.isNegative() || retryAfter.isZero()) {
            throw new IllegalArgumentException("retryAfter must be positive, was " + retryAfter);
        }
    }

    /**
     * When the call is worth trying again: a hint for {@code Retry-After}.
     *
     * @return the wait, positive
     */
    public Duration retryAfter() {
        return retryAfter;
    }
}
