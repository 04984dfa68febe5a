package dev.sluice.config;

import dev.sluice.RateLimiterRegistry;

/**
 * Adjusts the {@link RateLimiterRegistry} that {@link EnableRateLimiting} (or the Spring Boot
 * starter) builds, and with it every limiter built there: every bean of this type is applied, in
 * {@code @Order}, after the store, clock and sleeper are set. The starter uses it for the
 * failure policy, metrics and statistics.
 *
 * <pre class="code">
 * &#64;Bean
 * RateLimiterRegistryCustomizer failOpen() {
 *     return registry -&gt; registry.onStoreFailure(FailurePolicy.FAIL_OPEN);
 * }
 * </pre>
 */
@FunctionalInterface
public interface RateLimiterRegistryCustomizer {

    /**
     * Adjusts the builder.
     *
     * @param builder the builder, with store, clock and sleeper set
     */
    void customize(RateLimiterRegistry.Builder builder);
}
