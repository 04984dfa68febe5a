package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A store could not decide a call: it is unreachable, did not answer within its timeout, or its
 * circuit breaker is open after repeated failures. Stores throw it (or fail their asynchronous
 * stage with it); a {@link RateLimiter} then applies its {@link FailurePolicy}, and under
 * {@link FailurePolicy#FAIL_CLOSED} this is what the caller sees, naming the limiter. The Spring
 * Boot starter answers it with {@code 503 Service Unavailable} and {@code Retry-After}.
 *
 * <p>Thrown for every call during an outage, so it carries no stack trace; the message says
 * what failed, never the key.
 */
public class StoreUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final @Nullable String limiterName;
    private final Duration retryAfter;

    /**
     * Creates the exception a store throws.
     *
     * @param message    what failed, without any key
     * @param retryAfter when the store is worth asking again (for example, when its circuit
     *                   breaker lets a call through); not negative
     */
    public StoreUnavailableException(String message, Duration retryAfter) {
        this(message, null, retryAfter, null);
    }

    private StoreUnavailableException(String message, @Nullable String limiterName, Duration retryAfter,
                                      @Nullable Throwable cause) {
        super(message, cause, false, false);
        this.limiterName = limiterName;
        this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
        if (retryAfter.isNegative()) {
            throw new IllegalArgumentException("retryAfter must not be negative, was " + retryAfter);
        }
    }

    /**
     * The exception a limiter throws under {@link FailurePolicy#FAIL_CLOSED}.
     *
     * @param limiterName the limiter whose call failed
     * @param failure     what the store threw
     * @param storeKey    the key the store was asked about, kept out of the message
     * @return the exception, with {@code failure} as its cause unless a message of it names the key
     */
    static StoreUnavailableException of(String limiterName, RuntimeException failure, String storeKey) {
        Duration retryAfter = failure instanceof StoreUnavailableException unavailable
                ? unavailable.retryAfter() : Duration.ofSeconds(1);
        return new StoreUnavailableException("Rate limiter '" + limiterName + "' could not decide: "
                + describe(failure, storeKey), limiterName, retryAfter, namesKey(failure, storeKey) ? null : failure);
    }

    /** A store failure in one line: the message of this exception, the type and message of any other. */
    static String describe(Throwable failure) {
        return failure instanceof StoreUnavailableException ? failure.getMessage()
                : failure.getClass().getSimpleName() + (failure.getMessage() == null ? "" : ": " + failure.getMessage());
    }

    /** A store failure in one line, with the key it was asked about replaced by {@code <key>}. */
    static String describe(Throwable failure, String storeKey) {
        return describe(failure).replace(storeKey, "<key>");
    }

    /** Whether the message of the failure, or of any of its causes, names the key. */
    private static boolean namesKey(Throwable failure, String storeKey) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause.getMessage() != null && cause.getMessage().contains(storeKey)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The limiter whose call failed, when a limiter threw this.
     *
     * @return the limiter's name, or {@code null} when a store threw it
     */
    public @Nullable String limiterName() {
        return limiterName;
    }

    /**
     * When the store is worth asking again: a hint for {@code Retry-After}.
     *
     * @return the wait, zero or more
     */
    public Duration retryAfter() {
        return retryAfter;
    }
}
