package dev.sluice.aop;

import dev.sluice.Tier;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Limits set outside the code, by limiter name, that take precedence over what
 * {@code @RateLimited} declares, so that an operator can change a limit without a rebuild. The
 * Spring Boot starter implements it from {@code sluice.limits.<name>.*}.
 */
public interface LimitOverrides {

    /** No overrides: every limiter is on, with the tiers its annotations declare. */
    LimitOverrides NONE = name -> Optional.empty();

    /**
     * The tiers configured for a limiter; when present they replace all of the annotation's
     * tiers, and the annotation may leave {@code limit} and {@code window} out.
     *
     * @param limiterName the limiter's name
     * @return the configured tiers, or empty to keep the annotation's
     */
    Optional<List<Tier>> tiers(String limiterName);

    /**
     * The plans configured for a limiter, each with the tiers that replace the default ones for
     * the calls of that plan.
     *
     * @param limiterName the limiter's name
     * @return the tiers by plan name; empty when none are configured
     */
    default Map<String, List<Tier>> plans(String limiterName) {
        return Map.of();
    }

    /**
     * The condition configured for a limiter: a SpEL expression over the call, as
     * {@code @RateLimited(condition)} takes, that replaces the annotation's. A call for which it
     * is {@code false} is neither limited nor counted by the limiter.
     *
     * @param limiterName the limiter's name
     * @return the expression, or empty to keep the annotation's
     */
    default Optional<String> condition(String limiterName) {
        return Optional.empty();
    }

    /**
     * Whether a limiter is on. A limiter that is off lets every call through.
     *
     * @param limiterName the limiter's name
     * @return {@code true} unless configuration turns the limiter off
     */
    default boolean enabled(String limiterName) {
        return true;
    }
}
