package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.convert.ConversionException;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * {@link EnableRateLimiting} in proxy mode: a {@link RateLimitingAdvisor} as an infrastructure
 * bean of this context, applied by Spring's auto-proxy creator for infrastructure advisors (the
 * one {@code @EnableTransactionManagement} registers), which leaves the application's
 * {@code @Aspect} beans alone.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
@Import(ProxyRateLimitingConfiguration.AutoProxyRegistrar.class)
public class ProxyRateLimitingConfiguration implements ImportAware {

    /** The bean name of the {@link RateLimitingAdvisor}. */
    public static final String RATE_LIMITING_ADVISOR_BEAN_NAME = "dev.sluice.rateLimitingAdvisor";

    /** The Environment property that, when set, overrides {@link EnableRateLimiting#order()}. */
    public static final String ORDER_PROPERTY = "sluice.aspect.order";

    private int order = defaultOrder();

    @Override
    public void setImportMetadata(AnnotationMetadata importMetadata) {
        Map<String, @Nullable Object> attributes =
                importMetadata.getAnnotationAttributes(EnableRateLimiting.class.getName());
        if (attributes != null && attributes.get("order") instanceof Integer annotated) {
            order = annotated;
        }
    }

    /**
     * Limits the calls of {@code @RateLimited} methods through Spring proxies. An advisor of this
     * context's own, so that several contexts in one JVM (as in a test suite) do not share a
     * configuration.
     *
     * @param methodRateLimiter the engine, created on the first limited call
     * @param environment       may set {@value #ORDER_PROPERTY}
     * @return the advisor
     */
    @Bean(RATE_LIMITING_ADVISOR_BEAN_NAME)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    RateLimitingAdvisor rateLimitingAdvisor(ObjectProvider<MethodRateLimiter> methodRateLimiter,
                                            Environment environment) {
        RateLimitingAdvisor advisor = new RateLimitingAdvisor(new RateLimitingInterceptor(methodRateLimiter::getObject));
        advisor.setOrder(order(environment));
        return advisor;
    }

    /** The order of {@value #ORDER_PROPERTY} if it is set, else that of the annotation. */
    private int order(Environment environment) {
        Integer configured;
        try {
            configured = environment.getProperty(ORDER_PROPERTY, Integer.class);
        } catch (ConversionException e) {
            throw new IllegalStateException(ORDER_PROPERTY + " must be a whole number (an order: the lower, the"
                    + " further out among other advice), not '" + environment.getProperty(ORDER_PROPERTY) + "'", e);
        }
        return configured != null ? configured : order;
    }

    private static int defaultOrder() {
        return (Integer) AnnotationUtils.getDefaultValue(EnableRateLimiting.class, "order");
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

    /**
     * Registers Spring's auto-proxy creator for infrastructure advisors, unless a more capable one
     * (that of {@code @EnableAspectJAutoProxy}) is registered, which applies them too.
     */
    static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }
    }
}
