package dev.sluice.boot;

import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.config.RateLimiterRegistryCustomizer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer metrics for Sluice: {@code sluice.decisions}, {@code sluice.store.latency},
 * {@code sluice.store.state}, {@code sluice.wait}, {@code sluice.key.errors} and
 * {@code sluice.plans.unknown}, when the application has a
 * {@link MeterRegistry}.
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
    RateLimiterRegistryCustomizer sluiceMetricsCustomizer(MeterRegistry registry, RateLimitStore store) {
        MicrometerRateLimitListener listener = new MicrometerRateLimitListener(registry);
        TimedRateLimitStore timed = new TimedRateLimitStore(store, registry);
        return builder -> builder.store(timed).listener(listener);
    }

    /**
     * {@code sluice.store.state} (tags {@code store}, {@code state}: closed, open or half_open):
     * 1 for the state the store's circuit breaker is in, 0 for the others.
     *
     * @param store the store the limiters use
     * @return the gauges; none for a store without a circuit breaker
     */
    @Bean
    MeterBinder sluiceStoreStateMetrics(RateLimitStore store) {
        return registry -> store.circuitBreaker().ifPresent(breaker -> {
            for (StoreCircuitBreaker.State state : StoreCircuitBreaker.State.values()) {
                Gauge.builder("sluice.store.state", breaker, circuit -> circuit.state() == state ? 1 : 0)
                        .description("1 for the state the store's circuit breaker is in, 0 for the others")
                        .tag("store", TimedRateLimitStore.name(store))
                        .tag("state", state.name().toLowerCase(Locale.ROOT))
                        .register(registry);
            }
        });
    }

    /**
     * With {@code sluice.redis.local-sync}: {@code sluice.local-sync.syncs} (tag {@code outcome}:
     * success or failure), {@code sluice.local-sync.unsynced.decisions} (decisions made in this
     * JVM alone while Redis could not be reached) and {@code sluice.local-sync.store.reachable}
     * (1 while the latest sync was answered, 0 while deciding alone).
     *
     * @param localSync the local-sync limiters, if configured
     * @return the meters; none without local counting
     */
    @Bean
    MeterBinder sluiceLocalSyncMetrics(ObjectProvider<LocalSyncLimiters> localSync) {
        return registry -> localSync.ifAvailable(limiters -> {
            LocalSyncRateLimitStore store = limiters.store();
            FunctionCounter.builder("sluice.local-sync.syncs", store, synced -> synced.statistics().syncs())
                    .description("Syncs of local counts with Redis").tag("outcome", "success").register(registry);
            FunctionCounter.builder("sluice.local-sync.syncs", store, synced -> synced.statistics().failedSyncs())
                    .description("Syncs of local counts with Redis").tag("outcome", "failure").register(registry);
            FunctionCounter.builder("sluice.local-sync.unsynced.decisions", store,
                            synced -> synced.statistics().decisionsWhileUnreachable())
                    .description("Decisions made in this JVM alone while Redis could not be reached")
                    .register(registry);
            Gauge.builder("sluice.local-sync.store.reachable", store, synced -> synced.statistics().storeReachable() ? 1 : 0)
                    .description("1 while Redis answers the syncs, 0 while limiters decide in this JVM alone")
                    .register(registry);
        });
    }
}
