package dev.sluice.config;

import java.util.Objects;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;

/**
 * Applies a {@link RateLimitingInterceptor} to the methods {@code dev.sluice.aop.RateLimitedAspect}
 * advises: those carrying {@code @RateLimited} or {@code @RateLimits}, directly or through an
 * annotation made of them, and the public methods of classes that carry them so. Its pointcut
 * matches what the aspect's does, so that proxies and woven code limit the same methods, with
 * plain reflection: proxies need no AspectJ weaver, and an application that has none keeps its
 * own {@code @Aspect} beans switched off (Spring Boot switches them on when the weaver is on the
 * class path).
 *
 * <p>{@link EnableRateLimiting} registers it as an infrastructure bean, with the order of
 * {@link EnableRateLimiting#order()} or of the {@code sluice.aspect.order} property.
 */
public class RateLimitingAdvisor extends AbstractPointcutAdvisor {

    /** The methods to limit: those the aspect's around advice applies to. */
    private final Pointcut pointcut = new RateLimitedMethodPointcut();

    /** What limits their calls. */
    private final RateLimitingInterceptor interceptor;

    /**
     * Creates the advisor.
     *
     * @param interceptor what limits the calls
     */
    public RateLimitingAdvisor(RateLimitingInterceptor interceptor) {
        this.interceptor = Objects.requireNonNull(interceptor, "interceptor");
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }
}
