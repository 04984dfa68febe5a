package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.metrics.SluiceObservationAutoConfiguration;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Decisions as Micrometer observations: the limiter, the outcome and the binding tier as
 * low-cardinality key values, and never the key.
 */
class DecisionObservationsTest {

    private static final String KEY = "+15550100";

    private final List<Observation.Context> observed = new CopyOnWriteArrayList<>();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class,
                    SluiceObservationAutoConfiguration.class));

    private ObservationRegistry registry() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                observed.add(context);
            }
        });
        return registry;
    }

    private static Map<String, String> values(Observation.Context context) {
        return context.getLowCardinalityKeyValues().stream()
                .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue));
    }

    @Test
    void withinARequestsObservationEachDecisionIsAnObservationNamingItsLimiterOutcomeAndTier() {
        runner.withBean(ObservationRegistry.class, this::registry).run(context -> {
            RateLimiter otp = context.getBean(RateLimiterRegistry.class).limiterBuilder().name("otp")
                    .tier(Tier.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW)).build();
            Observation.createNotStarted("http.server.requests", context.getBean(ObservationRegistry.class))
                    .observe(() -> {
                        for (int i = 0; i < 4; i++) {
                            otp.tryAcquire(KEY);
                        }
                    });
        });
        observed.removeIf(context -> context.getName().equals("http.server.requests"));

        assertThat(observed).hasSize(4).allSatisfy(context -> {
            assertThat(context.getName()).isEqualTo("sluice.decision");
            assertThat(context.getContextualName()).isEqualTo("rate limit otp");
            assertThat(context.getHighCardinalityKeyValues()).isEmpty();
            assertThat(context.getLowCardinalityKeyValues().stream().map(KeyValue::getValue))
                    .as("the key is personal data").noneMatch(value -> value.contains("5550100"));
        });
        assertThat(observed.subList(0, 3)).allSatisfy(context -> assertThat(values(context))
                .isEqualTo(Map.of("limiter", "otp", "outcome", "allowed", "tier", "3/PT1M")));
        assertThat(values(observed.get(3))).isEqualTo(Map.of("limiter", "otp", "outcome", "rejected", "tier", "3/PT1M"));
    }

    @Test
    void outsideAnyObservationOnlyCallsNotAdmittedAreObserved() {
        runner.withBean(ObservationRegistry.class, this::registry).run(context -> {
            RateLimiter otp = context.getBean(RateLimiterRegistry.class).limiterBuilder().name("otp")
                    .tier(Tier.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW)).build();
            for (int i = 0; i < 4; i++) {
                otp.tryAcquire(KEY);
            }
        });

        assertThat(observed).singleElement().satisfies(context -> assertThat(values(context))
                .isEqualTo(Map.of("limiter", "otp", "outcome", "rejected", "tier", "3/PT1M")));
    }

    @Test
    void withoutAnObservationRegistryNothingIsObserved() {
        runner.run(context -> assertThat(context).doesNotHaveBean("sluiceObservationCustomizer"));
    }
}
