/**
 * Sluice's Spring Boot starter: auto-configuration of the stores and {@code sluice.*}
 * properties, HTTP 429 with rate-limit headers, client addresses behind trusted proxies,
 * Micrometer metrics and the {@code ratelimits} actuator endpoint, for Spring MVC and Spring
 * WebFlux applications alike.
 */
@NullMarked
package dev.sluice.boot;

import org.jspecify.annotations.NullMarked;
