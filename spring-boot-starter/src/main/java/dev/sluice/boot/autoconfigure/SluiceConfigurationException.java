package dev.sluice.boot.autoconfigure;

import dev.sluice.aop.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * Sluice's Spring Boot configuration cannot work: a {@code sluice.*} setting that names a limiter
 * no method has, a tier missing its limit or window, or a store whose module is missing. It fails
 * start-up, and Spring Boot reports it with its description and the {@linkplain #action() action}
 * that fixes it.
 */
public class SluiceConfigurationException extends RateLimitConfigurationException {

    private static final long serialVersionUID = 1L;

    /** What to change so that the application starts. */
    private final String action;

    /**
     * Creates the exception.
     *
     * @param description what is wrong, naming the property
     * @param action      what to change
     * @param cause       the underlying failure, or {@code null}
     */
    public SluiceConfigurationException(String description, String action, @Nullable Throwable cause) {
        super(description, cause);
        this.action = action;
    }

    /**
     * What to change so that the application starts.
     *
     * @return the action, one or two sentences
     */
    public String action() {
        return action;
    }
}
