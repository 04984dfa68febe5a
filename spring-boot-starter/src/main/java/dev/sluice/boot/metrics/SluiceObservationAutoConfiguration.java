package dev.sluice.boot.metrics;

import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.config.RateLimiterRegistryCustomizer;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Observations of decisions ({@code sluice.decision}), when the application has an
 * {@link ObservationRegistry}, as Spring Boot's actuator provides;
 * {@code management.observations.enable.sluice=false} turns them off.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class, afterName = {
    "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration"})
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
public class SluiceObservationAutoConfiguration {

    /**
     * Observes every decision of every limiter.
     *
     * @param registry the application's observation registry
     * @return the customizer adding the listener
     */
    @Bean
    RateLimiterRegistryCustomizer sluiceObservationCustomizer(ObservationRegistry registry) {
        ObservingRateLimitListener listener = new ObservingRateLimitListener(registry);
        return builder -> builder.listener(listener);
    }
}
