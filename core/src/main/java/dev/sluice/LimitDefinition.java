package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One limiter as declared, before any call: what {@code @RateLimited} annotations (and
 * configuration overriding them) say, parsed and validated. Expressions are kept as text;
 * the annotation processing module parses them once and evaluates them per call.
 *
 * @param name    the limiter name, part of every stored key
 * @param key     the SpEL key expression; empty for one key shared by all calls
 * @param tiers   the tiers, decided together for each key
 * @param cost    the SpEL cost expression (a plain number is one)
 * @param onLimit what a call that does not fit does
 * @param maxWait with {@link OnLimit#WAIT}, the longest wait; zero otherwise
 * @param message the rejection reason; empty for the default
 * @param onStoreFailure what a call does when the store cannot decide it; {@code null} for the
 *                application's default
 * @param onKeyError what a call does when its key or cost expression gives no value;
 *                {@code null} for the application's default
 */
public record LimitDefinition(String name, String key, List<Tier> tiers, String cost, OnLimit onLimit,
                              Duration maxWait, String message, @Nullable FailurePolicy onStoreFailure,
                              @Nullable KeyErrorPolicy onKeyError) {

    /**
     * Checks the definition.
     *
     * @throws IllegalArgumentException when it is inconsistent
     */
    public LimitDefinition {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(cost, "cost");
        Objects.requireNonNull(onLimit, "onLimit");
        Objects.requireNonNull(maxWait, "maxWait");
        Objects.requireNonNull(message, "message");
        tiers = List.copyOf(tiers);
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        if (cost.isBlank()) {
            throw new IllegalArgumentException("cost must not be blank");
        }
        Checks.tiers(tiers);
        Checks.maxWait(onLimit, maxWait);
    }

    /**
     * A definition that leaves the failure policies to the application's defaults.
     *
     * @param name    the limiter name
     * @param key     the SpEL key expression
     * @param tiers   the tiers
     * @param cost    the SpEL cost expression
     * @param onLimit what a call that does not fit does
     * @param maxWait with {@link OnLimit#WAIT}, the longest wait
     * @param message the rejection reason
     */
    public LimitDefinition(String name, String key, List<Tier> tiers, String cost, OnLimit onLimit,
                           Duration maxWait, String message) {
        this(name, key, tiers, cost, onLimit, maxWait, message, null, null);
    }
}
