package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Parses the limits of every bean's class when the context has created its singletons, so that
 * an invalid {@code @RateLimited} fails start-up with a message naming the method, rather than
 * the first call.
 */
public class RateLimitedBeanValidator implements SmartInitializingSingleton {

    private final ConfigurableListableBeanFactory beanFactory;
    private final ObjectProvider<MethodRateLimiter> methodRateLimiter;

    /**
     * Creates the validator.
     *
     * @param beanFactory       the beans to validate
     * @param methodRateLimiter the engine whose parser validates them
     */
    public RateLimitedBeanValidator(ConfigurableListableBeanFactory beanFactory,
                                    ObjectProvider<MethodRateLimiter> methodRateLimiter) {
        this.beanFactory = beanFactory;
        this.methodRateLimiter = methodRateLimiter;
    }

    @Override
    public void afterSingletonsInstantiated() {
        MethodRateLimiter limiter = methodRateLimiter.getObject();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            if (beanFactory.getBeanDefinition(name).isAbstract()) {
                continue;
            }
            Class<?> type = beanFactory.getType(name, false);
            if (type != null) {
                limiter.validate(type);
            }
        }
    }
}
