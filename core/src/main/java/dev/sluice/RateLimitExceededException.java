package dev.sluice;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Thrown when a call does not fit its limits (and, with waiting, could not within its
 * {@code maxWait}). The Spring Boot starter turns it into HTTP 429 with {@code Retry-After}.
 *
 * <p>It is also what a caller gets when the store was {@linkplain #overloaded() overloaded}: more
 * calls were waiting for it than it may hold, and it refused this one with
 * {@link StoreOverloadedException} without deciding it. That is a spike, answered as a rejection
 * rather than as a store failure: its {@link #reason()} is {@value #STORE_OVERLOADED}, its
 * {@link #getCause() cause} the store's exception, and its decision has the tightest tier's figures
 * with nothing remaining and the store's {@code retryAfter}.
 *
 * <p>This is control flow, not a failure: it carries no stack trace, so rejecting is cheap.
 * The message names the limiter and the wait but never the key, which may be personal data
 * (a phone number, an IP address); the key is available from {@link #key()} for code that
 * knows what to do with it.
 */
public class RateLimitExceededException extends RuntimeException {

    /** The {@linkplain #reason() reason} of a rejection because the store was overloaded. */
    public static final String STORE_OVERLOADED = "Rate limit store overloaded";

    private static final long serialVersionUID = 1L;
    private static final String EXCEEDED = "Rate limit exceeded";

    private final String limiterName;
    private final String key;
    private final Decision decision;
    private final String reason;

    /**
     * Creates the exception.
     *
     * @param limiterName the limiter that rejected the call
     * @param key         the key the call was counted for
     * @param decision    the rejecting decision
     * @param reason      the limiter's message, or {@code null} or blank for the default
     */
    public RateLimitExceededException(String limiterName, String key, Decision decision, @Nullable String reason) {
        this(limiterName, key, decision, reason, null);
    }

    /**
     * Creates the exception, for a call rejected because the store was overloaded when
     * {@code overload} is given.
     *
     * @param limiterName the limiter that rejected the call
     * @param key         the key the call was counted for
     * @param decision    the rejecting decision
     * @param reason      the reason, or {@code null} or blank for the default: {@value #STORE_OVERLOADED}
     *                    when the store was overloaded, otherwise {@code "Rate limit exceeded"}
     * @param overload    what the overloaded store threw, which becomes the cause; {@code null}
     *                    when the limits rejected the call
     */
    public RateLimitExceededException(String limiterName, String key, Decision decision, @Nullable String reason,
                                      @Nullable StoreOverloadedException overload) {
        super(message(limiterName, decision, reason(reason, overload)), overload, false, false);
        this.limiterName = Objects.requireNonNull(limiterName, "limiterName");
        this.key = Objects.requireNonNull(key, "key");
        this.decision = Objects.requireNonNull(decision, "decision");
        this.reason = reason(reason, overload);
    }

    private static String reason(@Nullable String reason, @Nullable StoreOverloadedException overload) {
        if (reason != null && !reason.isBlank()) {
            return reason;
        }
        return overload != null ? STORE_OVERLOADED : EXCEEDED;
    }

    private static String message(String limiterName, Decision decision, String reason) {
        return reason + " (limiter '" + limiterName + "'; retry after " + decision.retryAfter().toMillis() + " ms)";
    }

    /**
     * The name of the limiter that rejected the call.
     *
     * @return the limiter name
     */
    public String limiterName() {
        return limiterName;
    }

    /**
     * The key the call was counted for. Treat it as personal data: do not log it or send it
     * to clients without thought.
     *
     * @return the resolved key, without the limiter name
     */
    public String key() {
        return key;
    }

    /**
     * The decision that rejected the call, with the binding tier's figures.
     *
     * @return the decision
     */
    public Decision decision() {
        return decision;
    }

    /**
     * The shortest wait after which the same call could pass.
     *
     * @return {@code decision().retryAfter()}
     */
    public Duration retryAfter() {
        return decision.retryAfter();
    }

    /**
     * Why the call was rejected, fit to show a client: the limiter's message, or
     * {@code "Rate limit exceeded"}; {@value #STORE_OVERLOADED} when the store was overloaded.
     *
     * @return the reason, without limiter name or key
     */
    public String reason() {
        return reason;
    }

    /**
     * Whether the call was rejected because the store was overloaded, not because it exceeded
     * its limits: the store had more calls waiting than it may hold, and refused this one
     * without counting it. Then {@link #getCause()} is the store's
     * {@link StoreOverloadedException}, {@link #retryAfter()} the store's hint, and the
     * decision's figures those of the tightest tier with nothing remaining.
     *
     * @return {@code true} for a rejection because the store was overloaded
     */
    public boolean overloaded() {
        return getCause() instanceof StoreOverloadedException;
    }
}
