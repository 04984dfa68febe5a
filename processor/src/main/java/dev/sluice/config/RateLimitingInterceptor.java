package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;
import java.util.Objects;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Limits calls through a Spring proxy: decides each call with a {@link MethodRateLimiter}, then
 * proceeds, waits or rejects. {@link RateLimitingAdvisor} applies it to {@code @RateLimited}
 * methods.
 */
public class RateLimitingInterceptor implements MethodInterceptor {

    private final SingletonSupplier<MethodRateLimiter> methodRateLimiter;

    /**
     * Creates the interceptor.
     *
     * @param methodRateLimiter supplies the engine; asked once, on the first call, so that the
     *                          engine and the beans it uses need not exist when proxies are made
     */
    public RateLimitingInterceptor(Supplier<MethodRateLimiter> methodRateLimiter) {
        this.methodRateLimiter = SingletonSupplier.of(Objects.requireNonNull(methodRateLimiter, "methodRateLimiter"));
    }

    /**
     * Decides the call, then proceeds, waits or rejects.
     *
     * @param invocation the call
     * @return what the method returned
     * @throws Throwable what the method threw, or {@code RateLimitExceededException}
     */
    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target)
                : invocation.getMethod().getDeclaringClass();
        return methodRateLimiter.obtain().invoke(invocation.getMethod(), target, targetClass,
                invocation.getArguments(), invocation::proceed);
    }
}
