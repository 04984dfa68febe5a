package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitedAspect;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.type.AnnotationMetadata;

/**
 * {@link EnableRateLimiting} in proxy mode: the aspect as a bean of this context, applied by
 * Spring's AspectJ auto-proxying.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
@Import(ProxyRateLimitingConfiguration.AutoProxyRegistrar.class)
public class ProxyRateLimitingConfiguration {

    /**
     * An aspect instance of this context's own, so that several contexts in one JVM (as in a
     * test suite) do not share a configuration.
     *
     * @param methodRateLimiter the engine
     * @return the aspect
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    RateLimitedAspect rateLimitedAspect(MethodRateLimiter methodRateLimiter) {
        RateLimitedAspect aspect = new RateLimitedAspect();
        aspect.setMethodRateLimiter(methodRateLimiter);
        return aspect;
    }

    /**
     * Validates the limits of every bean once all singletons exist, refusing limits on methods
     * Spring proxies cannot intercept.
     *
     * @param beanFactory       the bean factory to scan
     * @param methodRateLimiter the engine that parses limits
     * @return the validator
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RateLimitedBeanValidator rateLimitedBeanValidator(ConfigurableListableBeanFactory beanFactory,
                                                             ObjectProvider<MethodRateLimiter> methodRateLimiter) {
        return new RateLimitedBeanValidator(beanFactory, methodRateLimiter, AdviceMode.PROXY);
    }

    /** Makes sure {@code @Aspect} beans are applied, as {@code @EnableAspectJAutoProxy} does. */
    static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAspectJAnnotationAutoProxyCreatorIfNecessary(registry);
        }
    }
}
