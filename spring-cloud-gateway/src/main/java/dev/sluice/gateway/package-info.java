/**
 * Sluice limits on Spring Cloud Gateway routes: {@link dev.sluice.gateway.SluiceGatewayRateLimiter}
 * for the WebFlux gateway's {@code RequestRateLimiter} filter, and
 * {@link dev.sluice.gateway.SluiceFilterFunctions} for the Server MVC gateway.
 */
@NullMarked
package dev.sluice.gateway;

import org.jspecify.annotations.NullMarked;
