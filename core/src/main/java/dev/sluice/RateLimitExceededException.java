package dev.sluice;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Thrown when a call does not fit its limits (and, with waiting, could not within its
 * {@code maxWait}). The Spring Boot starter turns it into HTTP 429 with {@code Retry-After}.
 *
 * <p>This is control flow, not a failure: it carries no stack trace, so rejecting is cheap.
 * The message names the limiter and the wait but never the key, which may be personal data
 * (a phone number, an IP address); the key is available from {@link #key()} for code that
 * knows what to do with it.
 */
public class RateLimitExceededException extends RuntimeException {

    private static final long serialVersionUID = 1L;

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
        super(message(limiterName, decision, reason), null, false, false);
        this.limiterName = Objects.requireNonNull(limiterName, "limiterName");
        this.key = Objects.requireNonNull(key, "key");
        this.decision = Objects.requireNonNull(decision, "decision");
        this.reason = reason == null || reason.isBlank() ? "Rate limit exceeded" : reason;
    }

    private static String message(String limiterName, Decision decision, @Nullable String reason) {
        String text = reason == null || reason.isBlank() ? "Rate limit exceeded" : reason;
        return text + " (limiter '" + limiterName + "'; retry after " + decision.retryAfter().toMillis() + " ms)";
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
     * {@code "Rate limit exceeded"}.
     *
     * @return the reason, without limiter name or key
     */
    public String reason() {
        return reason;
    }
}
