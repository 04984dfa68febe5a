package dev.sluice.boot.autoconfigure;

import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.boot.actuate.LimitChanges;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Applies the limits configuration has now to the limiters of the registry, counts kept: the
 * tiers of {@code sluice.limits.<name>}, {@code sluice.http.rules} and {@code sluice.client.rules}, and the plans of
 * {@code sluice.limits.<name>.plans}. Run when Spring Cloud refreshes the environment.
 *
 * <p>What changes live: tiers and plans of limiters that exist. What needs a restart: new or
 * removed limiters and rules, a rule's path, methods, condition, key and plan expression and
 * {@code count-on}, a limiter's {@code sluice.limits.<name>.condition}, and going back from
 * configured tiers to an annotation's (removing {@code sluice.limits.<name>.tiers} keeps the
 * tiers last configured). Invalid new configuration changes nothing and is logged. A limiter
 * changed live through the actuator keeps its change: the configured limits are what taking the
 * change back returns to.
 */
final class ConfiguredLimitsRefresher {

    private static final System.Logger LOGGER = System.getLogger(ConfiguredLimitsRefresher.class.getName());

    private final RateLimiterRegistry registry;
    private final LimitChanges changes;
    private final Environment environment;
    /** The limiters configuration has named so far, whose plans it owns. */
    private final Set<String> configured = new LinkedHashSet<>();

    ConfiguredLimitsRefresher(RateLimiterRegistry registry, LimitChanges changes, Environment environment,
                              SluiceProperties started) {
        this.registry = registry;
        this.changes = changes;
        this.environment = environment;
        this.configured.addAll(started.getLimits().keySet());
    }

    /** Reads the {@code sluice.*} configuration again and applies its limits. */
    synchronized void refresh() {
        Map<RateLimiter, List<Tier>> tiers = new LinkedHashMap<>();
        Map<RateLimiter, Map<String, List<Tier>>> plans = new LinkedHashMap<>();
        Set<String> named;
        try {
            SluiceProperties now = Binder.get(environment).bind("sluice", SluiceProperties.class)
                    .orElseGet(SluiceProperties::new);
            PropertiesLimitOverrides overrides = new PropertiesLimitOverrides(now.getLimits());
            List<SluiceProperties.Rule> rules = now.getHttp().getRules();
            for (int i = 0; i < rules.size(); i++) {
                ruleTiers("sluice.http.rules[" + i + "]", rules.get(i).getName(), rules.get(i).getTiers(),
                        Algorithm.SLIDING_WINDOW, tiers);
            }
            List<SluiceProperties.ClientRule> clientRules = now.getClient().getRules();
            for (int i = 0; i < clientRules.size(); i++) {
                ruleTiers("sluice.client.rules[" + i + "]", clientRules.get(i).getName(), clientRules.get(i).getTiers(),
                        Algorithm.SLIDING_LOG, tiers);
            }
            named = new LinkedHashSet<>(configured);
            named.addAll(now.getLimits().keySet());
            for (String name : named) {
                registry.find(name).ifPresent(limiter -> {
                    overrides.tiers(name).ifPresent(configuredTiers -> tiers.put(limiter, configuredTiers));
                    plans.put(limiter, overrides.plans(name));
                });
            }
            configured.clear();
            configured.addAll(now.getLimits().keySet());
        } catch (RuntimeException e) {
            LOGGER.log(System.Logger.Level.WARNING, "The refreshed sluice.* configuration is invalid, so every"
                    + " limit stays as it was: " + e.getMessage());
            return;
        }
        List<String> changed = new ArrayList<>();
        Set<RateLimiter> limiters = new LinkedHashSet<>(tiers.keySet());
        limiters.addAll(plans.keySet());
        for (RateLimiter limiter : limiters) {
            try {
                if (changes.configure(limiter, tiers.get(limiter), plans.get(limiter))) {
                    changed.add(limiter.toString());
                } else {
                    LOGGER.log(System.Logger.Level.INFO, "Rate limiter '" + limiter.name() + "' keeps its live"
                            + " change; the refreshed configuration applies once the change is taken back");
                }
            } catch (IllegalArgumentException e) {
                LOGGER.log(System.Logger.Level.WARNING, "Rate limiter '" + limiter.name() + "' keeps its limits: the"
                        + " refreshed ones cannot be applied: " + e.getMessage());
            }
        }
        if (!changed.isEmpty()) {
            LOGGER.log(System.Logger.Level.INFO, "Limits refreshed from configuration: " + changed);
        }
    }

    /** The tiers a configured rule has now, if its limiter exists and it has tiers. */
    private void ruleTiers(String property, @Nullable String name, List<SluiceProperties.TierProperties> configured,
                           Algorithm algorithm, Map<RateLimiter, List<Tier>> tiers) {
        Optional<RateLimiter> limiter = name == null ? Optional.empty() : registry.find(name);
        if (limiter.isPresent() && !configured.isEmpty()) {
            tiers.put(limiter.get(), PropertiesLimitOverrides.tiers(property + ".tiers", configured, algorithm));
        }
    }

}
