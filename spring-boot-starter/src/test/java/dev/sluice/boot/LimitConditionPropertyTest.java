package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.LimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code sluice.limits.<name>.condition}: the condition that replaces a limiter's
 * {@code @RateLimited(condition)}, handed to the engine through its {@link LimitOverrides}.
 */
class LimitConditionPropertyTest {

    /** A service with two limiters, {@code greetings} and {@code farewells}. */
    public static class Greeter {

        @RateLimited(name = "greetings", key = "#user", limit = 5, window = "1m")
        public String hello(String user) {
            return "hello " + user;
        }

        @RateLimited(name = "farewells", key = "#user", limit = 5, window = "1m")
        public String bye(String user) {
            return "bye " + user;
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
            .withBean(Greeter.class);

    @Test
    void aConfiguredConditionReplacesTheAnnotationsOfThatLimiterOnly() {
        runner.withPropertyValues("sluice.limits.greetings.condition=#user != 'admin'",
                "sluice.limits.farewells.tiers[0].limit=3", "sluice.limits.farewells.tiers[0].window=1m")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LimitOverrides overrides = context.getBean(LimitOverrides.class);
                    assertThat(overrides.condition("greetings")).hasValue("#user != 'admin'");
                    assertThat(overrides.condition("farewells")).as("configured, but not its condition").isEmpty();
                    assertThat(overrides.condition("unconfigured")).isEmpty();
                });
    }

    @Test
    void aBlankConditionKeepsTheAnnotations() {
        runner.withPropertyValues("sluice.limits.greetings.condition= ")
                .run(context -> assertThat(context.getBean(LimitOverrides.class).condition("greetings")).isEmpty());
    }
}
