package dev.sluice.boot;

import dev.sluice.RateLimitStore;
import dev.sluice.config.MethodRateLimiterCustomizer;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer metrics for Sluice: {@code sluice.decisions}, {@code sluice.store.latency} and
 * {@code sluice.wait}, when the application has a {@link MeterRegistry}.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public class SluiceMetricsAutoConfiguration {

    /**
     * Times the store and counts outcomes.
     *
     * @param registry the meter registry
     * @param store    the store the limiters use
     * @return the customizer
     */
    @Bean
    MethodRateLimiterCustomizer sluiceMetricsCustomizer(MeterRegistry registry, RateLimitStore store) {
        MicrometerRateLimitListener listener = new MicrometerRateLimitListener(registry);
        TimedRateLimitStore timed = new TimedRateLimitStore(store, registry);
        return builder -> builder.store(timed).listener(listener);
    }
}
