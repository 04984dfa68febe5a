package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.RateLimited;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.web.servlet.SluiceWebMvcAutoConfiguration;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.core.env.MapPropertySource;

/**
 * Limits changed in configuration while the application runs, as Spring Cloud's refresh does
 * it: the environment changes, then an {@link EnvironmentChangeEvent} names the changed keys.
 * Counts are kept.
 */
class LimitsRefreshTest {

    /** Organizations read products, per organization, on their plan. */
    public static class Products {
        @RateLimited(name = "orgs", key = "#org", plan = "#plan", algorithm = Algorithm.FIXED_WINDOW)
        public String list(String org, String plan) {
            return "products of " + org;
        }
    }

    /** The configuration the application starts with. */
    private static final List<String> STARTED = List.of("sluice.limits.orgs.tiers[0].limit=2",
            "sluice.limits.orgs.tiers[0].window=1m", "sluice.limits.orgs.tiers[0].algorithm=fixed-window",
            "sluice.limits.orgs.plans.gold.tiers[0].limit=4", "sluice.limits.orgs.plans.gold.tiers[0].window=1m",
            "sluice.limits.orgs.plans.gold.tiers[0].algorithm=fixed-window",
            "sluice.http.rules[0].name=product-api", "sluice.http.rules[0].path=/products/**",
            "sluice.http.rules[0].tiers[0].limit=10", "sluice.http.rules[0].tiers[0].window=10s");

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class,
                    SluiceWebMvcAutoConfiguration.class))
            .withBean(MutableClock.class, () -> new MutableClock(Instant.parse("2300-01-01T00:00:00Z")))
            .withBean(Products.class)
            .withInitializer(context -> context.getEnvironment().getPropertySources()
                    .addFirst(source("configuration", STARTED)));

    private static MapPropertySource source(String name, List<String> properties) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (String property : properties) {
            String[] nameAndValue = property.split("=", 2);
            values.put(nameAndValue[0], nameAndValue[1]);
        }
        return new MapPropertySource(name, values);
    }

    /**
     * Replaces the configuration as a refreshed configuration source would, then tells the
     * application which keys changed.
     */
    private static void refresh(AssertableWebApplicationContext context, List<String> properties) {
        MapPropertySource refreshed = source("configuration", properties);
        context.getEnvironment().getPropertySources().replace("configuration", refreshed);
        context.publishEvent(new EnvironmentChangeEvent(context, Set.of(refreshed.getPropertyNames())));
    }

    /** The starting configuration with some properties changed. */
    private static List<String> changed(String... properties) {
        Map<String, String> all = new LinkedHashMap<>();
        for (String property : STARTED) {
            all.put(property.split("=", 2)[0], property);
        }
        for (String property : properties) {
            all.put(property.split("=", 2)[0], property);
        }
        return List.copyOf(all.values());
    }

    private static int admitted(Products products, String org, String plan) {
        int admitted = 0;
        try {
            while (admitted < 100) {
                products.list(org, plan);
                admitted++;
            }
        } catch (RateLimitExceededException rejected) {
            return admitted;
        }
        return admitted;
    }

    @Test
    void changedTiersAndPlansApplyToTheNextCallAndKeepTheCounts() {
        runner.run(context -> {
            Products products = context.getBean(Products.class);
            RateLimiterRegistry registry = context.getBean(RateLimiterRegistry.class);
            assertThat(admitted(products, "acme", null)).isEqualTo(2);

            refresh(context, changed("sluice.limits.orgs.tiers[0].limit=3",
                    "sluice.limits.orgs.plans.gold.tiers[0].limit=6", "sluice.limits.orgs.plans.platinum.tiers[0].limit=9",
                    "sluice.limits.orgs.plans.platinum.tiers[0].window=1m",
                    "sluice.limits.orgs.plans.platinum.tiers[0].algorithm=fixed-window",
                    "sluice.http.rules[0].tiers[0].limit=20"));

            RateLimiter orgs = registry.find("orgs").orElseThrow();
            assertThat(orgs.tiers()).containsExactly(Tier.of(3, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW));
            assertThat(orgs.plans()).containsOnlyKeys("gold", "platinum");
            assertThat(admitted(products, "acme", null)).as("raised from 2 to 3, 2 used").isEqualTo(1);
            assertThat(admitted(products, "acme", "gold")).as("gold raised to 6").isEqualTo(3);
            assertThat(admitted(products, "acme", "platinum")).isEqualTo(3);
            assertThat(registry.find("product-api").orElseThrow().tiers())
                    .containsExactly(Tier.of(20, Duration.ofSeconds(10), Algorithm.SLIDING_WINDOW));
        });
    }

    @Test
    void aPlanRemovedFromConfigurationIsGone() {
        runner.run(context -> {
            Products products = context.getBean(Products.class);
            refresh(context, STARTED.stream().filter(property -> !property.contains(".plans.")).toList());

            assertThat(context.getBean(RateLimiterRegistry.class).find("orgs").orElseThrow().plans()).isEmpty();
            assertThat(admitted(products, "acme", "gold")).as("the default tiers").isEqualTo(2);
        });
    }

    @Test
    void anInvalidRefreshChangesNothing() {
        runner.run(context -> {
            Products products = context.getBean(Products.class);
            refresh(context, changed("sluice.limits.orgs.tiers[0].limit=0",
                    "sluice.limits.orgs.plans.gold.tiers[0].limit=7"));

            RateLimiter orgs = context.getBean(RateLimiterRegistry.class).find("orgs").orElseThrow();
            assertThat(orgs.tiers()).containsExactly(Tier.of(2, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW));
            assertThat(orgs.plans().get("gold")).containsExactly(Tier.of(4, Duration.ofMinutes(1),
                    Algorithm.FIXED_WINDOW));
            assertThat(admitted(products, "acme", null)).isEqualTo(2);
            assertThatThrownBy(() -> products.list("acme", null)).isInstanceOf(RateLimitExceededException.class);
        });
    }
}
