package dev.sluice.boot.metrics;

import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreQueue;
import dev.sluice.boot.autoconfigure.LocalSyncLimiters;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.client.PartnerSignals;
import dev.sluice.config.RateLimiterRegistryCustomizer;
import io.micrometer.core.instrument.Counter;
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
 * {@code sluice.store.state}, {@code sluice.store.queue}, {@code sluice.store.queue.capacity},
 * {@code sluice.store.overloaded}, {@code sluice.wait}, {@code sluice.key.errors} and
 * {@code sluice.plans.unknown}, when the application has a
 * {@link MeterRegistry}.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class,
        afterName = {"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
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
     * {@code sluice.client.partner.signals} (tags {@code rule}, {@code signal}): what partners
     * said in answers to the requests of {@code sluice.client.rules}: {@code pause} (a pause they
     * asked for), {@code quota} (a changed quota the rule follows) and {@code ignored} (a value
     * that was malformed, out of range or contradictory, and not used).
     *
     * @param registry the meter registry
     * @return the counter of signals
     */
    @Bean
    PartnerSignals sluiceClientSignalMetrics(MeterRegistry registry) {
        return (rule, signal) -> Counter.builder("sluice.client.partner.signals")
                .description("What partners said in answers to the requests of client rules")
                .tag("rule", rule)
                .tag("signal", signal)
                .register(registry)
                .increment();
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
     * For a store whose decisions wait in a queue (the Redis store): {@code sluice.store.queue},
     * the decisions waiting to be sent now; {@code sluice.store.queue.capacity}, the most that may
     * wait; and {@code sluice.store.overloaded}, a counter of the decisions that found the queue
     * full or waited too long in it, and got the store's overload policy. All tagged {@code store}.
     *
     * @param store the store the limiters use
     * @return the meters; none for a store without a queue
     */
    @Bean
    MeterBinder sluiceStoreQueueMetrics(RateLimitStore store) {
        return registry -> store.queue().ifPresent(queue -> {
            String name = TimedRateLimitStore.name(store);
            Gauge.builder("sluice.store.queue", queue, StoreQueue::queued)
                    .description("Decisions waiting to be sent to the store")
                    .tag("store", name)
                    .register(registry);
            Gauge.builder("sluice.store.queue.capacity", queue, StoreQueue::capacity)
                    .description("The most decisions that may wait to be sent to the store")
                    .tag("store", name)
                    .register(registry);
            FunctionCounter.builder("sluice.store.overloaded", queue, StoreQueue::overloaded)
                    .description("Decisions the store's queue could not hold in time, which got its overload policy")
                    .tag("store", name)
                    .register(registry);
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
