package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitConfigurationException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.KotlinDetector;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Parses the limits of every bean's class when the context has created its singletons, so that
 * an invalid {@code @RateLimited} fails start-up with a message naming the method, rather than
 * the first call.
 *
 * <p>The class validated is the one behind any proxy: the target class of a singleton that
 * exists (a JDK dynamic proxy included), otherwise the type the bean definition declares, so
 * that lazy and non-singleton beans are validated without being created.
 *
 * <p>In {@link AdviceMode#PROXY} mode, limits a Spring proxy cannot apply fail start-up too:
 * on a {@code static}, {@code private} or {@code final} method; on a bean that does not carry
 * the aspect (a proxy made by hand, a bean created before the aspect could apply); or, for a
 * bean behind a JDK dynamic proxy, on a method none of the proxy's interfaces declares. Woven
 * code ({@link AdviceMode#ASPECTJ}) limits such methods, so that mode accepts them; but it
 * cannot limit a Kotlin {@code suspend} function without blocking, so in that mode a limit on
 * one fails start-up.
 */
public class RateLimitedBeanValidator implements SmartInitializingSingleton {

    private final ConfigurableListableBeanFactory beanFactory;
    private final ObjectProvider<MethodRateLimiter> methodRateLimiter;
    private final AdviceMode mode;

    /**
     * Creates the validator.
     *
     * @param beanFactory       the beans to validate
     * @param methodRateLimiter the engine whose parser validates them
     * @param mode              how the aspect is applied: {@link AdviceMode#PROXY} also refuses
     *                          limits on methods Spring proxies cannot intercept
     */
    public RateLimitedBeanValidator(ConfigurableListableBeanFactory beanFactory,
                                    ObjectProvider<MethodRateLimiter> methodRateLimiter, AdviceMode mode) {
        this.beanFactory = beanFactory;
        this.methodRateLimiter = methodRateLimiter;
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    @Override
    public void afterSingletonsInstantiated() {
        MethodRateLimiter limiter = methodRateLimiter.getObject();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            if (beanFactory.getBeanDefinition(name).isAbstract()) {
                continue;
            }
            Object bean = existingSingleton(name);
            Class<?> type = bean != null ? AopUtils.getTargetClass(bean) : beanFactory.getType(name, false);
            if (type != null) {
                Class<?> userClass = ClassUtils.getUserClass(type);
                if (mode == AdviceMode.ASPECTJ) {
                    rejectSuspendingFunctions(userClass);
                }
                limiter.validate(userClass);
                if (mode == AdviceMode.PROXY) {
                    rejectLimitsProxiesCannotApply(limiter, userClass, name, bean);
                }
            }
        }
    }

    /** The bean as created, if it is a singleton that exists; never a factory bean, whose product may not. */
    private @Nullable Object existingSingleton(String name) {
        if (!beanFactory.containsSingleton(name)) {
            return null;
        }
        Object bean = beanFactory.getSingleton(name);
        return bean instanceof FactoryBean<?> ? null : bean;
    }

    /** Fails for a limit on a Kotlin suspend function, which woven code cannot apply without blocking. */
    private static void rejectSuspendingFunctions(Class<?> targetClass) {
        if (!KotlinDetector.isKotlinType(targetClass)) {
            return;
        }
        RateLimitedMethodPointcut limited = new RateLimitedMethodPointcut();
        ReflectionUtils.doWithMethods(targetClass, method -> {
            if (KotlinDetector.isSuspendingFunction(method) && limited.matches(method, targetClass)) {
                throw MethodRateLimiter.wovenSuspendingFunction(method);
            }
        }, ReflectionUtils.USER_DECLARED_METHODS);
    }

    private static void rejectLimitsProxiesCannotApply(MethodRateLimiter limiter, Class<?> targetClass,
                                                       String beanName, @Nullable Object bean) {
        boolean advised = bean == null || advisedByRateLimiting(bean);
        Set<Method> reachable = bean != null && AopUtils.isJdkDynamicProxy(bean)
                ? methodsOfInterfaces(bean.getClass(), targetClass) : null;
        List<Method> methods = new ArrayList<>();
        ReflectionUtils.doWithMethods(targetClass, methods::add, ReflectionUtils.USER_DECLARED_METHODS);
        // By name: the JVM lists a class's methods in no set order, and start-up names the same one each time.
        methods.sort(Comparator.comparing(Method::getName).thenComparing(Method::toGenericString));
        for (Method method : methods) {
            if (limiter.limitersFor(method, targetClass).isEmpty()) {
                continue;
            }
            Unreachable unreachable = unreachable(method, beanName, advised, reachable);
            if (unreachable != null) {
                throw RateLimitConfigurationException.invalid(method, "@RateLimited", "is on a method Spring proxies"
                        + " cannot intercept, so its calls would never be limited: " + unreachable.reason + ". "
                        + unreachable.cure + ", or weave the aspect with AspectJ:"
                        + " @EnableRateLimiting(mode = AdviceMode.ASPECTJ)");
            }
        }
    }

    /** Why a proxy never sees a method's calls, and what to change. */
    private record Unreachable(String reason, String cure) {
    }

    /**
     * Why a Spring proxy of the bean never sees the calls of a method, or {@code null} when it
     * sees them.
     *
     * @param advised   whether the bean carries the aspect; {@code true} for a bean not created yet
     * @param reachable behind a JDK dynamic proxy, the methods its interfaces reach; otherwise
     *                  {@code null} (a class-based proxy, or a bean not created yet)
     */
    private static @Nullable Unreachable unreachable(Method method, String beanName, boolean advised,
                                                     @Nullable Set<Method> reachable) {
        int modifiers = method.getModifiers();
        if (Modifier.isStatic(modifiers)) {
            return new Unreachable("the method is static", "Make it an instance method");
        }
        if (Modifier.isPrivate(modifiers)) {
            return new Unreachable("the method is private", "Make it public");
        }
        if (!advised) {
            return new Unreachable("bean '" + beanName + "' does not carry the rate-limiting aspect (a proxy made by"
                    + " hand, or a bean created before the aspect could apply, such as a BeanPostProcessor and the"
                    + " beans it uses)", "Let Spring create the bean from its class");
        }
        if (reachable != null) {
            return reachable.contains(method) ? null : new Unreachable("no interface of the JDK dynamic proxy of"
                    + " bean '" + beanName + "' declares the method", "Declare it on an interface the bean"
                    + " implements, have Spring proxy the class (proxyTargetClass = true)");
        }
        if (Modifier.isFinal(modifiers)) {
            return new Unreachable("the method is final", "Make it non-final");
        }
        return null;
    }

    /** Whether calls of the bean go through the {@link RateLimitingAdvisor}. */
    private static boolean advisedByRateLimiting(Object bean) {
        if (!(bean instanceof Advised advised)) {
            // An opaque proxy cannot be inspected; an object that is no proxy carries no aspect.
            return AopUtils.isAopProxy(bean);
        }
        for (Advisor advisor : advised.getAdvisors()) {
            if (advisor.getAdvice() instanceof RateLimitingInterceptor) {
                return true;
            }
        }
        return false;
    }

    /** The methods of {@code targetClass} that the interfaces of a JDK dynamic proxy class reach. */
    private static Set<Method> methodsOfInterfaces(Class<?> proxyClass, Class<?> targetClass) {
        Set<Method> reached = new HashSet<>();
        for (Class<?> proxied : proxyClass.getInterfaces()) {
            for (Method method : proxied.getMethods()) {
                Method implementation = ClassUtils.getMostSpecificMethod(method, targetClass);
                reached.add(BridgeMethodResolver.findBridgedMethod(implementation));
            }
        }
        return reached;
    }
}
