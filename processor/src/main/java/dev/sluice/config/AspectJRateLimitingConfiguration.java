package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitedAspect;
import org.aspectj.lang.Aspects;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * {@link EnableRateLimiting} in AspectJ mode: configures the AspectJ singleton that woven code
 * calls, and registers no proxies. The singleton is one per class loader: the last context to
 * start configures it.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class AspectJRateLimitingConfiguration {

    /**
     * Hands this context's engine to the woven aspect.
     *
     * @param methodRateLimiter the engine
     * @return a bean that configures the aspect when initialized
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    InitializingBean rateLimitedAspectConfigurer(MethodRateLimiter methodRateLimiter) {
        return () -> Aspects.aspectOf(RateLimitedAspect.class).setMethodRateLimiter(methodRateLimiter);
    }

    /**
     * Validates the limits of every bean once all singletons exist. Woven code limits static,
     * private and final methods and calls on {@code this}, so they are accepted.
     *
     * @param beanFactory       the bean factory to scan
     * @param methodRateLimiter the engine that parses limits
     * @return the validator
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RateLimitedBeanValidator rateLimitedBeanValidator(ConfigurableListableBeanFactory beanFactory,
                                                             ObjectProvider<MethodRateLimiter> methodRateLimiter) {
        return new RateLimitedBeanValidator(beanFactory, methodRateLimiter, AdviceMode.ASPECTJ);
    }
}
