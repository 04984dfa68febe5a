package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;
import java.util.Objects;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Limits calls through a Spring proxy: decides each call with a {@link MethodRateLimiter}, then
 * proceeds, waits or rejects. {@link RateLimitingAdvisor} applies it to {@code @RateLimited}
 * methods.
 *
 * <p>A call decided later (an asynchronous method once its decision completes, a reactive
 * method or Kotlin {@code suspend} function for each admitted subscription) proceeds with a copy
 * of the method invocation, exposed as the current one while it runs, so that the advice after
 * this one (an application's {@code @Aspect} included) runs again for it, whenever and on
 * whichever thread it proceeds.
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
                invocation.getArguments(), new Proceeding(invocation));
    }

    /** Proceeds with the method invocation; a copy proceeds with a clone of it. */
    private record Proceeding(MethodInvocation invocation) implements MethodRateLimiter.Invocation {

        @Override
        public @Nullable Object proceed() throws Throwable {
            return invocation.proceed();
        }

        @Override
        public MethodRateLimiter.Invocation copy() {
            if (!(invocation instanceof ProxyMethodInvocation proxied)) {
                return this;
            }
            MethodInvocation clone = proxied.invocableClone();
            return () -> ExposeInvocationInterceptor.INSTANCE.invoke(clone);
        }
    }
}
