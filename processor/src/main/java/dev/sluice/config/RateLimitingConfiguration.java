package dev.sluice.config;

import dev.sluice.RateLimitStore;
import dev.sluice.Sleeper;
import dev.sluice.aop.MethodRateLimiter;
import java.time.InstantSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.env.Environment;

/**
 * The bean every mode of {@link EnableRateLimiting} needs: the {@link MethodRateLimiter}. Each
 * mode's configuration adds the start-up validation of every bean's limits
 * ({@link RateLimitedBeanValidator}) as that mode applies them.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class RateLimitingConfiguration {

    /** The bean name of the {@link MethodRateLimiter}. */
    public static final String METHOD_RATE_LIMITER_BEAN_NAME = "dev.sluice.methodRateLimiter";

    /**
     * The engine, from the application's store, clock and sleeper when it defines them, then
     * adjusted by every {@link MethodRateLimiterCustomizer} bean.
     *
     * @param store       the application's store, if any; with several, the {@code @Primary} one
     * @param clock       the application's clock, if it has exactly one
     * @param sleeper     the application's sleeper, if any
     * @param customizers adjust the engine (limits from configuration, variables, listeners)
     * @param environment resolves placeholders
     * @param beanFactory resolves bean references in expressions
     * @return the engine
     */
    @Bean(METHOD_RATE_LIMITER_BEAN_NAME)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static MethodRateLimiter methodRateLimiter(ObjectProvider<RateLimitStore> store,
                                               ObjectProvider<InstantSource> clock,
                                               ObjectProvider<Sleeper> sleeper,
                                               ObjectProvider<MethodRateLimiterCustomizer> customizers,
                                               Environment environment,
                                               ConfigurableListableBeanFactory beanFactory) {
        MethodRateLimiter.Builder builder = MethodRateLimiter.builder()
                .clock(clock.getIfUnique(InstantSource::system))
                .placeholders(environment::resolveRequiredPlaceholders)
                .beanResolver(new BeanFactoryResolver(beanFactory));
        // Two candidates without a @Primary fail here rather than silently fall back to defaults.
        store.ifAvailable(builder::store);
        sleeper.ifAvailable(builder::sleeper);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }
}
