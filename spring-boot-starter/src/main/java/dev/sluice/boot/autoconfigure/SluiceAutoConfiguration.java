package dev.sluice.boot.autoconfigure;

import dev.sluice.CountSyncStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.boot.actuate.LimitChanges;
import dev.sluice.boot.actuate.RateLimitStatistics;
import dev.sluice.boot.actuate.SharedLimitChanges;
import dev.sluice.config.EnableRateLimiting;
import dev.sluice.config.MethodRateLimiterCustomizer;
import dev.sluice.config.RateLimiterRegistryCustomizer;
import dev.sluice.redisson.RedissonRateLimitStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Locale;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Sluice for Spring Boot: {@code @RateLimited} methods limited through Spring AOP, with the
 * in-memory store by default or Redis with {@code sluice.store=redis}, and limits overridable
 * by {@code sluice.limits.*}. {@code sluice.enabled=false} turns it all off. A
 * {@link RateLimitStore} bean of the application's replaces the store.
 */
@AutoConfiguration(afterName = {"org.redisson.spring.starter.RedissonAutoConfigurationV4",
    "org.redisson.spring.starter.RedissonAutoConfigurationV2"})
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
@EnableRateLimiting
public class SluiceAutoConfiguration {

    /**
     * Counts per limiter, and who each limiter is limiting, for the actuator endpoint.
     *
     * @param properties the settings
     * @return the statistics
     */
    @Bean
    RateLimitStatistics sluiceRateLimitStatistics(SluiceProperties properties) {
        SluiceProperties.TopKeys topKeys = properties.getTopKeys();
        if (topKeys.isEnabled() && topKeys.getCapacity() < 1) {
            throw new SluiceConfigurationException("sluice.top-keys.capacity must be at least 1, was "
                    + topKeys.getCapacity(), "Set sluice.top-keys.capacity to 16, say, or sluice.top-keys.enabled"
                    + " to false to keep no top keys.", null);
        }
        return new RateLimitStatistics(topKeys.isEnabled() ? topKeys.getCapacity() : 0);
    }

    @Bean
    PropertiesLimitOverrides sluiceLimitOverrides(SluiceProperties properties) {
        return new PropertiesLimitOverrides(properties.getLimits());
    }

    /**
     * Applies {@code sluice.failure-policy} (deciding in a store like the in-memory one under
     * {@code local-fallback}) and {@code sluice.circuit-breaker.*-exceptions} to every limiter of
     * the registry, and counts their calls.
     *
     * @param properties the settings
     * @param statistics counts calls per limiter
     * @param clock      the application's clock, if it has exactly one
     * @return the customizer
     */
    @Bean
    RateLimiterRegistryCustomizer sluiceRegistryCustomizer(SluiceProperties properties, RateLimitStatistics statistics,
                                                           ObjectProvider<InstantSource> clock) {
        SluiceProperties.CircuitBreaker outages = properties.getCircuitBreaker();
        return registry -> {
            registry.onStoreFailure(properties.getFailurePolicy())
                    .fallbackStore(inMemoryStore(properties, clock))
                    .listener(statistics);
            if (outages.getRecordExceptions() != null) {
                registry.recordExceptions(classes(outages.getRecordExceptions()));
            }
            if (outages.getIgnoreExceptions() != null) {
                registry.ignoreExceptions(classes(outages.getIgnoreExceptions()));
            }
        };
    }

    @SuppressWarnings("unchecked")
    private static Class<? extends Throwable>[] classes(List<Class<? extends Throwable>> classes) {
        return classes.toArray(Class[]::new);
    }

    /**
     * Applies {@code sluice.key-error} and {@code sluice.limits.*} to annotated methods.
     *
     * @param properties the settings
     * @param overrides  the limits from configuration
     * @return the customizer
     */
    @Bean
    MethodRateLimiterCustomizer sluicePropertiesCustomizer(SluiceProperties properties,
                                                           PropertiesLimitOverrides overrides) {
        return builder -> builder.onKeyError(properties.getKeyError()).overrides(overrides);
    }

    /**
     * {@code sluice.redis.local-sync}: the limiters it names count in this JVM and sync with the
     * store, which must be able to take their counts (the Redis store).
     *
     * @param store      the store the limiters use
     * @param properties the settings
     * @param clock      the application's clock, if it has exactly one
     * @return the local-sync limiters
     */
    @Bean
    @Conditional(LocalSyncLimiters.Configured.class)
    LocalSyncLimiters sluiceLocalSyncLimiters(RateLimitStore store, SluiceProperties properties,
                                              ObjectProvider<InstantSource> clock) {
        if (!(store instanceof CountSyncStore shared)) {
            throw new SluiceConfigurationException("sluice.redis.local-sync needs sluice.store=redis: it counts locally"
                    + " and syncs with Redis, and the store is " + store.getClass().getSimpleName()
                    + ", which cannot take synced counts.",
                    "Set sluice.store=redis (with dev.sluice:sluice-redisson), or remove the local-sync settings.", null);
        }
        return new LocalSyncLimiters(shared, properties, clock.getIfUnique(InstantSource::system));
    }

    /**
     * The default store, in this JVM.
     *
     * @param properties the settings
     * @param clock      the application's clock, if it has exactly one
     * @return the store
     */
    @Bean
    @ConditionalOnMissingBean(RateLimitStore.class)
    @ConditionalOnProperty(name = "sluice.store", havingValue = "memory", matchIfMissing = true)
    InMemoryRateLimitStore sluiceInMemoryRateLimitStore(SluiceProperties properties,
                                                        ObjectProvider<InstantSource> clock) {
        return inMemoryStore(properties, clock);
    }

    /**
     * Live changes of limits through the actuator, kept in this instance: the Redis store's
     * configuration shares them instead.
     *
     * @return the changes
     */
    @Bean
    @ConditionalOnMissingBean(LimitChanges.class)
    LimitChanges sluiceLocalLimitChanges() {
        return new LimitChanges();
    }

    private static InMemoryRateLimitStore inMemoryStore(SluiceProperties properties, ObjectProvider<InstantSource> clock) {
        InMemoryRateLimitStore.Builder store = InMemoryRateLimitStore.builder()
                .maximumKeys(properties.getMemory().getMaximumKeys());
        // Without a clock of the application's, the store's own, which no step of the system clock reaches.
        clock.ifUnique(store::clock);
        return store.build();
    }

    /**
     * {@code sluice.store=redis}: the Lua store, on the application's Redisson client or one of
     * its own, which does not need Redis to be up: start-up waits for it to connect and load its
     * script for at most {@code sluice.redis.warm-up-timeout}, then goes on without it.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "sluice.store", havingValue = "redis")
    @ConditionalOnClass(name = "dev.sluice.redisson.RedissonRateLimitStore")
    @ConditionalOnMissingBean(RateLimitStore.class)
    static class RedisStoreConfiguration {

        private static final String OWN_CLIENT = "sluiceRedissonClient";

        @Bean(name = OWN_CLIENT, destroyMethod = "shutdown")
        @ConditionalOnMissingBean(RedissonClient.class)
        RedissonClient sluiceRedissonClient(SluiceProperties properties, Environment environment) {
            return Redisson.create(RedisConnection.config(properties.getRedis(), environment));
        }

        /**
         * Holds start-up, once every bean is made, until the store is warm or
         * {@code sluice.redis.warm-up-timeout} is over.
         */
        @Bean
        StoreWarmUp sluiceRedisWarmUp(SluiceProperties properties) {
            return new StoreWarmUp(properties.getRedis().getWarmUpTimeout());
        }

        /**
         * Live changes of limits that every instance on this Redis makes, unless
         * {@code sluice.redis.share-changes} is false.
         */
        @Bean
        @ConditionalOnBooleanProperty(name = "sluice.redis.share-changes", matchIfMissing = true)
        SharedLimitChanges sluiceLimitChanges(RedissonClient client, RateLimiterRegistry registry,
                                              SluiceProperties properties) {
            return new SharedLimitChanges(client, registry, properties.getRedis().getKeyPrefix(),
                    properties.getRedis().getWarmUpTimeout());
        }

        /**
         * The store, which starts connecting and loading its script as soon as it is made, in
         * the background; {@code warmUp} holds start-up until it is done.
         */
        @Bean
        RedissonRateLimitStore sluiceRedissonRateLimitStore(RedissonClient client, SluiceProperties properties,
                                                            Environment environment, BeanFactory beanFactory,
                                                            StoreWarmUp warmUp) {
            boolean ownClient = beanFactory.containsBean(OWN_CLIENT) && beanFactory.getBean(OWN_CLIENT) == client;
            SluiceProperties.Redis redis = properties.getRedis();
            RedissonRateLimitStore.Builder store = RedissonRateLimitStore.builder(client)
                    .keyPrefix(redis.getKeyPrefix())
                    .onOverload(redis.getOnOverload());
            RedisConnection.timeout(redis, environment, ownClient).ifPresent(store::timeout);
            String keyHashSecret = redis.getKeyHashSecret();
            if (keyHashSecret != null) {
                store.keyHashSecret(keyHashSecret);
            }
            Integer batchSize = redis.getBatchSize();
            if (batchSize != null) {
                configure("sluice.redis.batch-size", "Set it from 1 (one script call per decision) to 1024.",
                        () -> store.batchSize(batchSize));
            }
            Integer maxQueued = redis.getMaxQueued();
            if (maxQueued != null) {
                configure("sluice.redis.max-queued", "Set it to at least 1, such as 20000.",
                        () -> store.maxQueued(maxQueued));
            }
            Duration maxQueueWait = redis.getMaxQueueWait();
            if (maxQueueWait != null) {
                configure("sluice.redis.max-queue-wait", "Set it to a positive duration, such as 1s.",
                        () -> store.maxQueueWait(maxQueueWait));
            }
            SluiceProperties.CircuitBreaker outages = properties.getCircuitBreaker();
            if (outages.getRecordExceptions() != null || outages.getIgnoreExceptions() != null) {
                // The store's own breaker, with the outages configured.
                Duration timeout = RedisConnection.timeout(redis, environment, ownClient).orElse(Duration.ZERO);
                StoreCircuitBreaker.Builder breaker = StoreCircuitBreaker.builder()
                        .name(RedissonRateLimitStore.class.getSimpleName())
                        .openDuration(timeout.compareTo(StoreCircuitBreaker.DEFAULT_OPEN_DURATION) > 0 ? timeout
                                : StoreCircuitBreaker.DEFAULT_OPEN_DURATION);
                if (outages.getRecordExceptions() != null) {
                    breaker.recordExceptions(classes(outages.getRecordExceptions()));
                }
                if (outages.getIgnoreExceptions() != null) {
                    breaker.ignoreExceptions(classes(outages.getIgnoreExceptions()));
                }
                store.circuitBreaker(breaker.build());
            }
            RedissonRateLimitStore built = store.build();
            warmUp.started(RedissonRateLimitStore.class.getSimpleName(), built.warmUp());
            return built;
        }

        /** Applies one setting to the store's builder, which refuses a value it cannot take. */
        private static void configure(String property, String action, Runnable setting) {
            try {
                setting.run();
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigurationException(property + " is invalid: " + e.getMessage(), action, e);
            }
        }
    }

    /**
     * With Spring Cloud: a refresh of the environment ({@code /actuator/refresh}, a config
     * server's push) applies changed tiers and plans to the limiters, counts kept.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
    static class RefreshConfiguration {

        @Bean
        ApplicationListener<EnvironmentChangeEvent> sluiceLimitsRefresh(RateLimiterRegistry registry,
                                                                         LimitChanges changes,
                                                                         Environment environment,
                                                                         SluiceProperties properties) {
            ConfiguredLimitsRefresher refresher = new ConfiguredLimitsRefresher(registry, changes, environment,
                    properties);
            return event -> {
                if (event.getKeys().stream().anyMatch(key -> key.toLowerCase(Locale.ROOT).startsWith("sluice"))) {
                    refresher.refresh();
                }
            };
        }
    }

    /** {@code sluice.store=redis} without the Redis module: say what is missing. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "sluice.store", havingValue = "redis")
    @ConditionalOnMissingClass("dev.sluice.redisson.RedissonRateLimitStore")
    static class RedisStoreMissingConfiguration {

        @Bean
        RateLimitStore sluiceRedissonRateLimitStore() {
            throw new SluiceConfigurationException("sluice.store=redis needs the Redis store, which is not on the"
                    + " class path.", "Add the dependency dev.sluice:sluice-redisson, of the same version as the"
                    + " starter, or set sluice.store=memory.", null);
        }
    }
}
