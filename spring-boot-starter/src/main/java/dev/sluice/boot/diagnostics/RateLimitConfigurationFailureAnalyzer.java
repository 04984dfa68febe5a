package dev.sluice.boot.diagnostics;

import dev.sluice.aop.RateLimitConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a start-up failure caused by a rate limit that cannot work ({@code @RateLimited} or
 * {@code sluice.*} configuration) as Spring Boot reports its own: what is wrong, then the action
 * that fixes it, instead of a stack trace in which the reason is the last of many causes.
 */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RateLimitConfigurationException cause) {
        String action = cause instanceof SluiceConfigurationException configuration ? configuration.action()
                : "Correct the @RateLimited annotation named above. Every limited method is checked when the"
                        + " application starts, so it starts once all of them are valid.";
        return new FailureAnalysis(cause.getMessage(), action, cause);
    }
}
