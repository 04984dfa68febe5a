package dev.sluice.config;

import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Sleeper;
import dev.sluice.aop.MethodRateLimiter;
import java.time.InstantSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.env.Environment;

/**
 * The beans every mode of {@link EnableRateLimiting} needs: the {@link RateLimiterRegistry}
 * every limiter lives in, and the {@link MethodRateLimiter} that registers the limits of
 * annotated methods there. Each mode's configuration adds the start-up validation of every
 * bean's limits ({@link RateLimitedBeanValidator}) as that mode applies them.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class RateLimitingConfiguration {

    /** The bean name of the {@link MethodRateLimiter}. */
    public static final String METHOD_RATE_LIMITER_BEAN_NAME = "dev.sluice.methodRateLimiter";

    /** The bean name of the {@link RateLimiterRegistry}. */
    public static final String REGISTRY_BEAN_NAME = "dev.sluice.rateLimiterRegistry";

    /**
     * The registry, from the application's store, clock and sleeper when it defines them, then
     * adjusted by every {@link RateLimiterRegistryCustomizer} bean.
     *
     * @param store       the application's store, if any; with several, the {@code @Primary} one
     * @param clock       the application's clock, if it has exactly one
     * @param sleeper     the application's sleeper, if any
     * @param customizers adjust the registry (failure policy, listeners, a store wrapper)
     * @return the registry
     */
    @Bean(REGISTRY_BEAN_NAME)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RateLimiterRegistry rateLimiterRegistry(ObjectProvider<RateLimitStore> store,
                                                   ObjectProvider<InstantSource> clock,
                                                   ObjectProvider<Sleeper> sleeper,
                                                   ObjectProvider<RateLimiterRegistryCustomizer> customizers) {
        RateLimiterRegistry.Builder builder = RateLimiterRegistry.builder();
        // Without a clock of the application's, the registry's own, which no step of the system clock reaches.
        clock.ifUnique(builder::clock);
        // Two candidates without a @Primary fail here rather than silently fall back to defaults.
        store.ifAvailable(builder::store);
        sleeper.ifAvailable(builder::sleeper);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    /**
     * The engine of annotated methods, registering their limiters in the registry, then adjusted
     * by every {@link MethodRateLimiterCustomizer} bean.
     *
     * @param registry    the registry
     * @param customizers adjust the engine (limits from configuration, variables, key errors)
     * @param environment resolves placeholders
     * @param beanFactory resolves bean references in expressions
     * @return the engine
     */
    @Bean(METHOD_RATE_LIMITER_BEAN_NAME)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static MethodRateLimiter methodRateLimiter(@Qualifier(REGISTRY_BEAN_NAME) RateLimiterRegistry registry,
                                               ObjectProvider<MethodRateLimiterCustomizer> customizers,
                                               Environment environment,
                                               ConfigurableListableBeanFactory beanFactory) {
        MethodRateLimiter.Builder builder = MethodRateLimiter.builder()
                .registry(registry)
                .placeholders(environment::resolveRequiredPlaceholders)
                .beanResolver(new BeanFactoryResolver(beanFactory));
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }
}
