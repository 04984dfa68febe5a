package dev.sluice.config;

import dev.sluice.aop.MethodRateLimiter;

/**
 * Adjusts the {@link MethodRateLimiter} that {@link EnableRateLimiting} (or the Spring Boot
 * starter) builds: every bean of this type is applied, in {@code @Order}, after its registry is
 * set. The starter uses it for limits from configuration, {@code #ip} and {@code #request} and
 * response headers. What every limiter shares (store, failure policy, listeners) is the
 * registry's: see {@link RateLimiterRegistryCustomizer}.
 *
 * <pre class="code">
 * &#64;Bean
 * MethodRateLimiterCustomizer sharedKeyOnErrors() {
 *     return builder -&gt; builder.onKeyError(KeyErrorPolicy.SHARED_KEY);
 * }
 * </pre>
 */
@FunctionalInterface
public interface MethodRateLimiterCustomizer {

    /**
     * Adjusts the builder.
     *
     * @param builder the builder, with its registry set
     */
    void customize(MethodRateLimiter.Builder builder);
}
