package dev.sluice.aop;

import java.lang.reflect.Method;
import java.util.Objects;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.Pointcut;
import org.aspectj.lang.reflect.MethodSignature;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;

/**
 * Limits calls to methods carrying {@code @RateLimited}: directly, through a meta-annotation,
 * or, for public methods, on their class. This aspect is for AspectJ weaving, compile-time or
 * load-time; all the work is done by a {@link MethodRateLimiter}. Spring proxies do not use it:
 * {@code @EnableRateLimiting} and the Spring Boot starter register
 * {@code dev.sluice.config.RateLimitingAdvisor}, whose pointcut matches the methods this
 * aspect's does without AspectJ's weaver, and which delegates to a {@link MethodRateLimiter} too.
 *
 * <p>Woven code uses AspectJ's singleton, {@code RateLimitedAspect.aspectOf()} (which the AspectJ
 * compiler adds to this class), so configure that instance:
 *
 * <pre class="code">
 * RateLimitedAspect.aspectOf().setMethodRateLimiter(MethodRateLimiter.builder()
 *         .registry(RateLimiterRegistry.builder().store(store).build()).build());
 * </pre>
 *
 * <p>Woven methods returning {@code Mono}, {@code Flux} or another reactive type are decided
 * per subscription, as behind Spring proxies (see {@link MethodRateLimiter}); each admitted
 * subscription proceeds with the join point again. Woven code cannot limit a Kotlin
 * {@code suspend} function without blocking (it sees a method taking a {@code Continuation},
 * returning as soon as the function suspends): a call of a limited one fails with
 * {@link RateLimitConfigurationException}, and
 * {@code @EnableRateLimiting(mode = AdviceMode.ASPECTJ)} fails start-up; limit suspend functions
 * through Spring proxies.
 *
 * <p>Unconfigured, it limits with an in-memory store and the system clock. Under Spring,
 * {@code @EnableRateLimiting(mode = AdviceMode.ASPECTJ)} configures the singleton with the
 * context's engine, and registers no proxies, so that woven beans are not limited twice.
 */
@Aspect
public class RateLimitedAspect {

    private volatile @Nullable MethodRateLimiter methodRateLimiter;

    /** Methods carrying {@code @RateLimited} or a meta-annotation made of it. */
    @Pointcut("execution(@dev.sluice.annotation.RateLimited * *(..))"
            + " || execution(@dev.sluice.annotation.RateLimits * *(..))"
            + " || execution(@(@dev.sluice.annotation.RateLimited *) * *(..))"
            + " || execution(@(@dev.sluice.annotation.RateLimits *) * *(..))")
    void annotatedMethod() {
    }

    /** Public methods of classes carrying {@code @RateLimited} or a meta-annotation made of it. */
    @Pointcut("execution(public * (@dev.sluice.annotation.RateLimited *).*(..))"
            + " || execution(public * (@dev.sluice.annotation.RateLimits *).*(..))"
            + " || execution(public * (@(@dev.sluice.annotation.RateLimited *) *).*(..))"
            + " || execution(public * (@(@dev.sluice.annotation.RateLimits *) *).*(..))")
    void methodOfAnnotatedClass() {
    }

    /**
     * Decides the call, then proceeds, waits or rejects.
     *
     * @param joinPoint the call
     * @return what the method returned
     * @throws Throwable what the method threw, or {@code RateLimitExceededException}
     */
    @Around("annotatedMethod() || methodOfAnnotatedClass()")
    public @Nullable Object limit(ProceedingJoinPoint joinPoint) throws Throwable {
        Method method = ((MethodSignature) joinPoint.getSignature()).getMethod();
        Object target = joinPoint.getTarget();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : method.getDeclaringClass();
        return methodRateLimiter().invoke(method, target, targetClass, joinPoint.getArgs(), joinPoint);
    }

    /**
     * Sets the engine; takes effect for the next call.
     *
     * @param methodRateLimiter the engine
     */
    public void setMethodRateLimiter(MethodRateLimiter methodRateLimiter) {
        this.methodRateLimiter = Objects.requireNonNull(methodRateLimiter, "methodRateLimiter");
    }

    /**
     * The engine in use, created with defaults when none was set.
     *
     * @return the engine
     */
    public MethodRateLimiter getMethodRateLimiter() {
        return methodRateLimiter();
    }

    private MethodRateLimiter methodRateLimiter() {
        MethodRateLimiter current = methodRateLimiter;
        if (current == null) {
            synchronized (this) {
                current = methodRateLimiter;
                if (current == null) {
                    current = MethodRateLimiter.builder().build();
                    methodRateLimiter = current;
                }
            }
        }
        return current;
    }
}
