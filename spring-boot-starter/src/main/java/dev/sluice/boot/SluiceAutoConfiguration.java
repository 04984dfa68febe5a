package dev.sluice.boot;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.config.EnableRateLimiting;
import dev.sluice.config.MethodRateLimiterCustomizer;
import dev.sluice.redisson.RedissonClientConfigs;
import dev.sluice.redisson.RedissonRateLimitStore;
import java.time.InstantSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.BaseConfig;
import org.redisson.config.Config;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
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
     * Counts per limiter for the actuator endpoint.
     *
     * @return the statistics
     */
    @Bean
    RateLimitStatistics sluiceRateLimitStatistics() {
        return new RateLimitStatistics();
    }

    @Bean
    PropertiesLimitOverrides sluiceLimitOverrides(SluiceProperties properties) {
        return new PropertiesLimitOverrides(properties.getLimits());
    }

    /**
     * Applies {@code sluice.failure-policy} and {@code sluice.limits.*}.
     *
     * @param properties the settings
     * @param overrides  the limits from configuration
     * @param statistics counts calls per limiter
     * @return the customizer
     */
    @Bean
    MethodRateLimiterCustomizer sluicePropertiesCustomizer(SluiceProperties properties,
                                                           PropertiesLimitOverrides overrides,
                                                           RateLimitStatistics statistics) {
        return builder -> builder.onStoreFailure(properties.getFailurePolicy())
                .overrides(overrides)
                .listener(statistics);
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
        return InMemoryRateLimitStore.builder()
                .clock(clock.getIfUnique(InstantSource::system))
                .maximumKeys(properties.getMemory().getMaximumKeys())
                .build();
    }

    /** {@code sluice.store=redis}: the Lua store, on the application's Redisson client or one of its own. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "sluice.store", havingValue = "redis")
    @ConditionalOnClass(name = "dev.sluice.redisson.RedissonRateLimitStore")
    @ConditionalOnMissingBean(RateLimitStore.class)
    static class RedisStoreConfiguration {

        @Bean(destroyMethod = "shutdown")
        @ConditionalOnMissingBean(RedissonClient.class)
        RedissonClient sluiceRedissonClient(SluiceProperties properties, Environment environment) {
            RedisConnection redis = RedisConnection.of(properties.getRedis(), environment);
            Config config;
            BaseConfig<?> connection;
            if (redis.nodes().isEmpty()) {
                config = RedissonClientConfigs.singleServer(redis.address());
                connection = config.useSingleServer().setDatabase(redis.database());
            } else {
                config = RedissonClientConfigs.cluster(redis.nodes());
                connection = config.useClusterServers();
            }
            if (redis.username() != null) {
                config.setUsername(redis.username());
            }
            if (redis.password() != null) {
                config.setPassword(redis.password());
            }
            connection.setTimeout(3_000);
            return Redisson.create(config);
        }

        @Bean
        RedissonRateLimitStore sluiceRedissonRateLimitStore(RedissonClient client, SluiceProperties properties) {
            return RedissonRateLimitStore.builder(client).keyPrefix(properties.getRedis().getKeyPrefix()).build();
        }
    }

    /** {@code sluice.store=redis} without the Redis module: say what is missing. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "sluice.store", havingValue = "redis")
    @ConditionalOnMissingClass("dev.sluice.redisson.RedissonRateLimitStore")
    static class RedisStoreMissingConfiguration {

        @Bean
        RateLimitStore sluiceRedissonRateLimitStore() {
            throw new IllegalStateException("sluice.store=redis needs the Redis store on the class path:"
                    + " add the dependency dev.sluice:sluice-redisson");
        }
    }
}
