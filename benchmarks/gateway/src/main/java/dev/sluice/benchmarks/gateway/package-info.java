/**
 * A hot route through Spring Cloud Gateway (WebFlux), limited by Sluice on Redis beside the
 * gateway's own {@code RedisRateLimiter}: {@link dev.sluice.benchmarks.gateway.GatewayLoad}.
 */
@NullMarked
package dev.sluice.benchmarks.gateway;

import org.jspecify.annotations.NullMarked;
