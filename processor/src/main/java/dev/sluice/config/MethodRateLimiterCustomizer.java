package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;

/**
 * Adjusts the {@link MethodRateLimiter} that {@link EnableRateLimiting} (or the Spring Boot
 * starter) builds: every bean of this type is applied, in {@code @Order}, after the store, clock
 * and sleeper are set. The starter uses it for limits from configuration, {@code #ip} and
 * {@code #request}, metrics and response headers.
 *
 * <pre class="code">
 * &#64;Bean
 * MethodRateLimiterCustomizer failOpen() {
 *     return builder -&gt; builder.onStoreFailure(FailurePolicy.FAIL_OPEN);
 * }
 * </pre>
 */
@FunctionalInterface
public interface MethodRateLimiterCustomizer {

    /**
     * Adjusts the builder.
     *
     * @param builder the builder, with store, clock and sleeper set
     */
    void customize(MethodRateLimiter.Builder builder);
}
