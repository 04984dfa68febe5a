/**
 * Spring configuration for plain Spring applications: {@link dev.sluice.config.EnableRateLimiting}
 * and what it imports. Spring Boot applications use the starter instead.
 */
@NullMarked
package dev.sluice.config;

import org.jspecify.annotations.NullMarked;
