package dev.sluice.boot.actuate;

import dev.sluice.RateLimitStore;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;

/**
 * The {@code sluice} health component, when Spring Boot's health support is present:
 * {@code management.health.sluice.enabled=false} turns it off.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@HealthLine.ConditionalOnHealthIndicator
@ConditionalOnBean(RateLimitStore.class)
public class SluiceHealthAutoConfiguration {

    /**
     * Reports the store's circuit breaker.
     *
     * @param store      the store the limiters use
     * @param properties for the default failure policy
     * @return the indicator
     */
    @Bean
    RateLimitStoreHealthIndicator sluiceHealthIndicator(RateLimitStore store, SluiceProperties properties) {
        return new RateLimitStoreHealthIndicator(store, properties.getFailurePolicy());
    }
}
