package dev.sluice.boot.web.reactive;

import dev.sluice.annotation.RateLimited;
import dev.sluice.annotation.RateLimits;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletionStage;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks, once a WebFlux application's singletons exist, the limited methods that are not
 * reactive. In WebFlux nothing binds a request to a thread: only a method returning {@code Mono},
 * {@code Flux} or another reactive type (or a Kotlin suspend function) is decided per
 * subscription, with the request's exchange in the Reactor Context; any other method is decided
 * when it is called, on the calling thread, where no request can be known.
 *
 * <ul>
 * <li>A non-reactive limited method whose key, cost or plan expression uses {@code #ip} or
 * {@code #request} fails start-up: those would have no value on every call, so the limit would
 * turn every call away, or count them all under one key.</li>
 * <li>The other non-reactive limited methods, except those returning a {@link CompletionStage}
 * (decided asynchronously), decide synchronously on the calling thread, in WebFlux usually an
 * event-loop thread: one warning lists them, since with the Redis store each decision blocks
 * that thread for a round trip, and with {@code onLimit = WAIT} for the wait.</li>
 * </ul>
 */
final class ReactiveLimitedMethodsCheck implements SmartInitializingSingleton {

    private static final System.Logger LOGGER = System.getLogger(ReactiveLimitedMethodsCheck.class.getName());
    /** The variables only a request gives. */
    private static final List<String> REQUEST_VARIABLES = List.of("ip", "request");

    private final ConfigurableListableBeanFactory beanFactory;
    private final ObjectProvider<MethodRateLimiter> methodRateLimiter;

    ReactiveLimitedMethodsCheck(ConfigurableListableBeanFactory beanFactory,
                                ObjectProvider<MethodRateLimiter> methodRateLimiter) {
        this.beanFactory = beanFactory;
        this.methodRateLimiter = methodRateLimiter;
    }

    @Override
    public void afterSingletonsInstantiated() {
        MethodRateLimiter engine = methodRateLimiter.getIfAvailable();
        if (engine == null) {
            return;
        }
        Set<String> synchronous = new TreeSet<>();
        Set<Class<?>> checked = new HashSet<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            if (beanFactory.getBeanDefinition(name).isAbstract()) {
                continue;
            }
            Object bean = beanFactory.containsSingleton(name) ? beanFactory.getSingleton(name) : null;
            Class<?> type = bean != null && !(bean instanceof FactoryBean<?>) ? AopUtils.getTargetClass(bean)
                    : beanFactory.getType(name, false);
            if (type == null) {
                continue;
            }
            Class<?> userClass = ClassUtils.getUserClass(type);
            if (!checked.add(userClass)
                    || !AnnotationUtils.isCandidateClass(userClass, Set.of(RateLimited.class, RateLimits.class))) {
                continue;
            }
            ReflectionUtils.doWithMethods(userClass, method -> {
                if (MethodRateLimiter.isDecidedOnSubscription(method) || engine.limitersFor(method, userClass).isEmpty()) {
                    return;
                }
                refuseRequestVariables(engine, method, userClass);
                if (!CompletionStage.class.isAssignableFrom(method.getReturnType())) {
                    synchronous.add(RateLimitConfigurationException.describe(method));
                }
            }, ReflectionUtils.USER_DECLARED_METHODS);
        }
        if (!synchronous.isEmpty()) {
            LOGGER.log(System.Logger.Level.WARNING, "These rate-limited methods of this WebFlux application are not"
                    + " reactive, so each call is decided synchronously on the thread calling it, usually an"
                    + " event-loop thread: " + String.join(", ", synchronous) + ". With the Redis store every"
                    + " decision blocks that thread for a round trip to Redis, and a limiter with onLimit = WAIT"
                    + " blocks it for the wait. Return Mono or Flux to have them decided without blocking.");
        }
    }

    /** Fails for a non-reactive method whose limits use what only a request gives. */
    private static void refuseRequestVariables(MethodRateLimiter engine, Method method, Class<?> userClass) {
        engine.contributedVariables(method, userClass).forEach((expression, variables) -> {
            String variable = variables.stream().filter(REQUEST_VARIABLES::contains).findFirst().orElse(null);
            if (variable != null) {
                String described = RateLimitConfigurationException.describe(method);
                throw new SluiceConfigurationException("The " + expression + " of the rate limit on " + described
                        + " uses #" + variable + ", which has no value in this WebFlux application: the method returns "
                        + method.getReturnType().getSimpleName() + ", so it is decided when it is called, and only a"
                        + " reactive method is decided with its request.", "Return Mono or Flux from " + described
                        + ", so that each subscription is decided with its request; or limit its path with"
                        + " sluice.http.rules, whose #ip and #request are the request's; or count the call by one of"
                        + " its arguments.", null);
            }
        });
    }
}
