package dev.sluice.aop;

import dev.sluice.annotation.KeyErrorPolicy;

/**
 * A call's {@code key} or {@code cost} expression gave no usable value: it threw, or yielded
 * {@code null}, a blank key or a cost that is not a whole number of at least 1. Under
 * {@link KeyErrorPolicy#REJECT} (the default) the call fails with it; the Spring Boot starter
 * answers it with {@code 400 Bad Request}, since the request usually lacks what its limit is
 * counted by (an optional header, an absent field). The message names the limiter, the method
 * and the expression, never a value. Thrown for every such call, so it carries no stack trace of
 * its own.
 */
public class RateLimitKeyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The limiter whose expression failed. */
    private final String limiterName;

    /**
     * Creates the exception.
     *
     * @param limiterName the limiter whose expression failed
     * @param message     what failed and where, without any value
     * @param cause       what the expression threw, or {@code null}
     */
    public RateLimitKeyException(String limiterName, String message, Throwable cause) {
        super(message, cause, false, false);
        this.limiterName = limiterName;
    }

    /**
     * The limiter whose expression failed.
     *
     * @return its name
     */
    public String limiterName() {
        return limiterName;
    }
}
