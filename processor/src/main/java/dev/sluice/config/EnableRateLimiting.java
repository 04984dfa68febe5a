package dev.sluice.config;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Import;

/**
 * Turns on {@code @RateLimited} for a plain Spring application (the Spring Boot starter does it
 * for you). Put it on a {@code @Configuration} class:
 *
 * <pre class="code">
 * &#64;Configuration
 * &#64;EnableRateLimiting
 * class AppConfig {
 * }
 * </pre>
 *
 * <p>It registers a {@link dev.sluice.aop.MethodRateLimiter} deciding with the application's
 * {@link dev.sluice.RateLimitStore} bean, or an in-memory store when there is none; the
 * application's {@link java.time.InstantSource} (a {@code java.time.Clock} bean, say) if it
 * has exactly one, otherwise the system clock; {@code ${...}} placeholders resolved from the
 * {@code Environment}; and {@code @bean} references in expressions. {@link MethodRateLimiterCustomizer}
 * beans adjust the rest (failure policy, listeners, limits from configuration). Every bean's
 * limits are validated when the context starts: an invalid annotation fails start-up.
 *
 * @see dev.sluice.annotation.RateLimited
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Import(RateLimitingConfigurationSelector.class)
public @interface EnableRateLimiting {

    /**
     * How the aspect is applied. {@link AdviceMode#PROXY} (the default) limits calls through
     * Spring proxies; {@link AdviceMode#ASPECTJ} configures the AspectJ singleton for code woven
     * with {@code dev.sluice.aop.RateLimitedAspect}, and registers no proxies, so that woven
     * beans are not limited twice. In proxy mode a limit no proxy would apply (on a
     * {@code static}, {@code private} or {@code final} method, for instance) fails start-up;
     * woven code applies it, so {@code ASPECTJ} mode accepts it.
     *
     * @return the advice mode
     */
    AdviceMode mode() default AdviceMode.PROXY;
}
