package dev.sluice.boot.autoconfigure;

import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.aop.LimitOverrides;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Limits from {@code sluice.limits.<name>} (tiers, plans, condition, on or off), checked when the
 * application starts: every tier complete, every condition a SpEL expression, and every name a
 * limiter's, so that a typo does not silently leave a limit as it was. A condition is read when
 * a limiter is built, so unlike tiers and plans it does not change on a refresh.
 *
 * <p>Public for the parts of the starter in other packages: the HTTP and client rules and the
 * actuator endpoint read configured tiers with {@link #tiers(String, List)} and
 * {@link #tier(String, SluiceProperties.TierProperties)}, and the web and client
 * auto-configurations take the bean.
 */
public final class PropertiesLimitOverrides implements LimitOverrides, ApplicationListener<ContextRefreshedEvent> {

    private final Map<String, SluiceProperties.Limit> limits;
    private final Map<String, List<Tier>> tiers = new LinkedHashMap<>();
    private final Map<String, Map<String, List<Tier>>> plans = new LinkedHashMap<>();
    private final Map<String, String> conditions = new LinkedHashMap<>();
    private final Set<String> limiters = ConcurrentHashMap.newKeySet();

    PropertiesLimitOverrides(Map<String, SluiceProperties.Limit> limits) {
        this.limits = Map.copyOf(limits);
        limits.forEach((name, limit) -> {
            if (!limit.getTiers().isEmpty()) {
                tiers.put(name, tiers(property(name) + ".tiers", limit.getTiers()));
            }
            Map<String, List<Tier>> limiterPlans = new LinkedHashMap<>();
            limit.getPlans().forEach((plan, configured) -> {
                String property = property(name) + ".plans." + plan + ".tiers";
                if (configured.getTiers().isEmpty()) {
                    throw new SluiceConfigurationException(property + " is empty: a plan needs at least one tier",
                            "Give the plan tiers, or remove it.", null);
                }
                limiterPlans.put(plan, tiers(property, configured.getTiers()));
            });
            plans.put(name, Collections.unmodifiableMap(limiterPlans));
            if (!limit.getCondition().isBlank()) {
                conditions.put(name, checked(property(name) + ".condition", limit.getCondition()));
            }
        });
    }

    /**
     * A condition that parses as SpEL. What it may refer to depends on the limiter's method, and
     * is checked where the limiter is built.
     */
    private static String checked(String property, String condition) {
        try {
            new SpelExpressionParser().parseExpression(condition);
        } catch (ParseException e) {
            throw new SluiceConfigurationException(property + " '" + condition + "' is not a valid SpEL expression: "
                    + e.getMessage(), "Correct the expression, or remove it to keep the annotation's condition.", e);
        }
        return condition;
    }

    /**
     * Configured tiers as {@link Tier}s, each complete and valid.
     *
     * @param listProperty the property of the list, for messages: {@code sluice.limits.otp.tiers}
     * @throws SluiceConfigurationException naming the first tier that is not
     */
    public static List<Tier> tiers(String listProperty, List<SluiceProperties.TierProperties> configured) {
        return tiers(listProperty, configured, Algorithm.SLIDING_WINDOW);
    }

    /**
     * Configured tiers as {@link Tier}s, each without an algorithm of its own taking {@code algorithm}.
     *
     * @param listProperty the list's property, for messages: {@code sluice.client.rules[0].tiers}
     * @throws SluiceConfigurationException when one is incomplete or invalid
     */
    public static List<Tier> tiers(String listProperty, List<SluiceProperties.TierProperties> configured,
                                   Algorithm algorithm) {
        return IntStream.range(0, configured.size())
                .mapToObj(i -> tier(listProperty + "[" + i + "]", configured.get(i), algorithm)).toList();
    }

    /**
     * A configured tier as a {@link Tier}, complete and valid.
     *
     * @param property the tier's property, for messages: {@code sluice.limits.otp.tiers[0]}
     * @throws SluiceConfigurationException when it is not
     */
    public static Tier tier(String property, SluiceProperties.TierProperties tier) {
        return tier(property, tier, Algorithm.SLIDING_WINDOW);
    }

    private static Tier tier(String property, SluiceProperties.TierProperties tier, Algorithm algorithm) {
        if (tier.getConcurrency() != null) {
            return concurrencyTier(property, tier);
        }
        if (tier.getAlgorithm() == Algorithm.CONCURRENCY) {
            throw new SluiceConfigurationException(property + ".algorithm is concurrency",
                    "Limit the calls running at once with " + property + ".concurrency, in place of limit, window and"
                    + " algorithm.", null);
        }
        if (tier.getLease() != null) {
            throw new SluiceConfigurationException(property + ".lease is set without concurrency",
                    "Set " + property + ".concurrency to limit the calls running at once, or remove the lease.", null);
        }
        if (tier.getLimit() == null || tier.getWindow() == null) {
            throw new SluiceConfigurationException(property + " needs both a limit and a window, or a concurrency",
                    "Set " + property + ".limit and " + property + ".window, or " + property + ".concurrency, or"
                    + " remove the tier.", null);
        }
        try {
            Algorithm counted = tier.getAlgorithm() != null ? tier.getAlgorithm() : algorithm;
            return new Tier(tier.getLimit(), tier.getWindow(), counted, tier.isCountRejected(),
                    tier.getBlockFor());
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(property + " is invalid: " + e.getMessage(),
                    "Correct the figures of " + property + ".", e);
        }
    }

    /** A tier with {@code concurrency}, which takes nothing of a rate tier. */
    private static Tier concurrencyTier(String property, SluiceProperties.TierProperties tier) {
        if (tier.getLimit() != null || tier.getWindow() != null || tier.getAlgorithm() != null || tier.isCountRejected()
                || !tier.getBlockFor().isZero()) {
            throw new SluiceConfigurationException(property + " gives concurrency with the settings of a rate"
                    + " (limit, window, algorithm, count-rejected or block-for)",
                    "Give " + property + ".concurrency (and lease) alone, and the rate as a tier of its own.", null);
        }
        try {
            return Tier.concurrency(tier.getConcurrency(), tier.getLease() != null ? tier.getLease() : Tier.DEFAULT_LEASE);
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(property + " is invalid: " + e.getMessage(),
                    "Correct the figures of " + property + ".", e);
        }
    }

    @Override
    public Optional<List<Tier>> tiers(String limiterName) {
        return Optional.ofNullable(tiers.get(limiterName));
    }

    @Override
    public Map<String, List<Tier>> plans(String limiterName) {
        return plans.getOrDefault(limiterName, Map.of());
    }

    @Override
    public Optional<String> condition(String limiterName) {
        return Optional.ofNullable(conditions.get(limiterName));
    }

    @Override
    public boolean enabled(String limiterName) {
        limiters.add(limiterName);
        SluiceProperties.Limit limit = limits.get(limiterName);
        return limit == null || limit.isEnabled();
    }

    /** Once every bean's limits are parsed: fails for configured names that match no limiter. */
    @Override
    public void onApplicationEvent(ContextRefreshedEvent event) {
        Set<String> unknown = new TreeSet<>(limits.keySet());
        unknown.removeAll(limiters);
        if (!unknown.isEmpty()) {
            throw new SluiceConfigurationException(unknown.stream().map(PropertiesLimitOverrides::property).toList()
                    + " configure limiters that no @RateLimited method has; the limiters are " + new TreeSet<>(limiters)
                    + ".", "Use the name of one of these limiters, in brackets when it has dots"
                    + " (sluice.limits[OtpController.sendOtp].tiers[0].limit), or remove the entry.", null);
        }
    }

    /** The property of a limiter, with brackets when its name has characters a property name cannot. */
    private static String property(String limiterName) {
        return limiterName.matches("[A-Za-z0-9-]+") ? "sluice.limits." + limiterName
                : "sluice.limits[" + limiterName + "]";
    }
}
