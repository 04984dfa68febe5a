package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One limiter as declared, before any call: what {@code @RateLimited} annotations (and
 * configuration overriding them) or a configured rule say, parsed and validated. It is what a
 * {@link RateLimiter} is built from ({@link RateLimiter.Builder#definition},
 * {@link RateLimiterRegistry#register}). Expressions are kept as text; whoever calls the limiter
 * parses them once and evaluates them per call.
 *
 * @param name           the limiter name, part of every stored key
 * @param key            the SpEL key expression; empty for one key shared by all calls
 * @param tiers          the default tiers, decided together for each key
 * @param cost           the SpEL cost expression (a plain number is one)
 * @param onLimit        what a call that does not fit does
 * @param maxWait        with {@link OnLimit#WAIT}, the longest wait; zero otherwise
 * @param message        the rejection reason; empty for the default
 * @param onStoreFailure what a call does when the store cannot decide it; {@code null} for the
 *                       application's default
 * @param onKeyError     what a call does when its key or cost expression gives no value;
 *                       {@code null} for the application's default
 * @param plan           the SpEL expression naming a call's plan; empty when every call takes
 *                       the default tiers
 * @param plans          the tiers of each plan, by name, replacing the default tiers for the
 *                       calls of that plan
 */
public record LimitDefinition(String name, String key, List<Tier> tiers, String cost, OnLimit onLimit,
                              Duration maxWait, String message, @Nullable FailurePolicy onStoreFailure,
                              @Nullable KeyErrorPolicy onKeyError, String plan, Map<String, List<Tier>> plans) {

    private static final Pattern WHOLE_NUMBER = Pattern.compile("[+-]?\\d{1,18}");

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
        Objects.requireNonNull(plan, "plan");
        tiers = List.copyOf(tiers);
        Map<String, List<Tier>> copied = new LinkedHashMap<>();
        plans.forEach((planName, planTiers) -> {
            Checks.name(planName);
            Checks.tiers(planTiers);
            copied.put(planName, List.copyOf(planTiers));
        });
        plans = Collections.unmodifiableMap(copied);
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
     * A definition without plans.
     *
     * @param name           the limiter name
     * @param key            the SpEL key expression
     * @param tiers          the tiers
     * @param cost           the SpEL cost expression
     * @param onLimit        what a call that does not fit does
     * @param maxWait        with {@link OnLimit#WAIT}, the longest wait
     * @param message        the rejection reason
     * @param onStoreFailure the failure policy, {@code null} for the application's default
     * @param onKeyError     the key-error policy, {@code null} for the application's default
     */
    public LimitDefinition(String name, String key, List<Tier> tiers, String cost, OnLimit onLimit,
                           Duration maxWait, String message, @Nullable FailurePolicy onStoreFailure,
                           @Nullable KeyErrorPolicy onKeyError) {
        this(name, key, tiers, cost, onLimit, maxWait, message, onStoreFailure, onKeyError, "", Map.of());
    }

    /**
     * A definition that leaves the failure policies to the application's defaults, without plans.
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

    /**
     * The cost when it is a plain number rather than an expression.
     *
     * @return the number, or {@code null} when the cost is an expression
     */
    public @Nullable Long fixedCost() {
        String text = cost.trim();
        return WHOLE_NUMBER.matcher(text).matches() ? Long.valueOf(text) : null;
    }
}
