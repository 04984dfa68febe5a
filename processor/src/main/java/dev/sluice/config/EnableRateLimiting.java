package dev.sluice.config;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

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
 * <p>It registers a {@link dev.sluice.RateLimiterRegistry}, in which every limiter lives and
 * which builds them on the application's {@link dev.sluice.RateLimitStore} bean, or an in-memory
 * store when there is none, and the application's {@link java.time.InstantSource} (a
 * {@code java.time.Clock} bean, say) if it has exactly one, otherwise the system clock; and a
 * {@link dev.sluice.aop.MethodRateLimiter} that registers the limits of annotated methods there,
 * with {@code ${...}} placeholders resolved from the {@code Environment} and {@code @bean}
 * references in expressions. {@link RateLimiterRegistryCustomizer} beans adjust what every
 * limiter gets (failure policy, listeners), {@link MethodRateLimiterCustomizer} beans what
 * annotated methods get (limits from configuration, variables). Every bean's limits are
 * validated when the context starts: an invalid annotation fails start-up.
 *
 * <p>Methods returning {@code CompletionStage} are decided without blocking their caller;
 * methods returning {@code Mono}, {@code Flux} or another reactive type, and Kotlin
 * {@code suspend} functions, are decided when subscribed, once per subscription (see
 * {@link dev.sluice.aop.MethodRateLimiter}).
 *
 * <p>In {@link AdviceMode#PROXY} mode, rate limiting is an infrastructure advisor, as
 * {@code @EnableTransactionManagement} and {@code @EnableCaching} register: it turns on
 * auto-proxying for infrastructure advisors only, not for the application's {@code @Aspect}
 * beans, which stay off unless the application enables them ({@code @EnableAspectJAutoProxy}).
 * {@link #order()} places it among other advice.
 *
 * @see dev.sluice.annotation.RateLimited
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Import(RateLimitingConfigurationSelector.class)
public @interface EnableRateLimiting {

    /**
     * How the limits are applied. {@link AdviceMode#PROXY} (the default) limits calls through
     * Spring proxies; {@link AdviceMode#ASPECTJ} configures the AspectJ singleton for code woven
     * with {@code dev.sluice.aop.RateLimitedAspect}, and registers no proxies, so that woven
     * beans are not limited twice. In proxy mode a limit no proxy would apply (on a
     * {@code static}, {@code private} or {@code final} method, for instance) fails start-up;
     * woven code applies it, so {@code ASPECTJ} mode accepts it. Kotlin {@code suspend}
     * functions are limited through proxies only: in {@code ASPECTJ} mode a limit on one fails
     * start-up.
     *
     * @return the advice mode
     */
    AdviceMode mode() default AdviceMode.PROXY;

    /**
     * Where rate limiting sits among the other advice of a bean in {@link AdviceMode#PROXY} mode:
     * the lower the order, the further out. The Environment property {@code sluice.aspect.order},
     * when set, takes precedence over this attribute. When several classes of one context carry
     * {@code @EnableRateLimiting}, the attribute of the one Spring processes last applies: in a
     * Spring Boot application that is the starter's, so set the property there.
     * {@link AdviceMode#ASPECTJ} mode ignores both.
     *
     * <p>The default, {@code Ordered.LOWEST_PRECEDENCE - 100}, puts rate limiting outside advice
     * that keeps Spring's default order, {@link Ordered#LOWEST_PRECEDENCE}, and leaves room for
     * advice meant to run between the two:
     * <ul>
     * <li>{@code @Transactional} ({@code @EnableTransactionManagement}): the limit is decided
     *     before a transaction begins, so a rejected call never opens one, nor holds a connection
     *     while it waits. Keep the order of rate limiting below that of the transaction
     *     advisor.</li>
     * <li>{@code @Cacheable} ({@code @EnableCaching}): every call is counted, a cache hit
     *     included, so a caller over its limit is rejected even for a value in the cache. To let
     *     cache hits through without taking a permit (only the calls that run the method count),
     *     give the cache advisor a lower order than rate limiting, for instance
     *     {@code @EnableCaching(order = Ordered.LOWEST_PRECEDENCE - 200)}.</li>
     * <li>Spring Framework's {@code @Retryable} ({@code @EnableResilientMethods}): its
     *     post-processor adds the retry advice in front of the advice a bean already has, whatever
     *     the orders, so retrying is always outside rate limiting and this attribute cannot change
     *     it. Each attempt is a call of the method and takes a permit, as a remote API that is
     *     being protected counts it; a rejected attempt is retried like any other failure unless
     *     the method excludes it: {@code @Retryable(excludes = RateLimitExceededException.class)}.
     *     For one permit per call however often it is retried, declare the
     *     {@code RetryAnnotationBeanPostProcessor} bean yourself (instead of
     *     {@code @EnableResilientMethods}) with {@code setBeforeExistingAdvisors(false)}: retrying
     *     then runs innermost, inside rate limiting (and inside transactions and caching).</li>
     * </ul>
     *
     * @return the order of the rate-limiting advisor
     */
    int order() default Ordered.LOWEST_PRECEDENCE - 100;
}
