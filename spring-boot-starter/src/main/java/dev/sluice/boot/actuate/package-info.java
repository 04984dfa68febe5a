/**
 * Sluice in Spring Boot's actuator: the {@code ratelimits} endpoint and its web extension, with
 * the counts, top keys and live changes of limits it shows (changes shared through Redis with
 * the Redis store), the masking of keys, the warning about write operations open over HTTP, and
 * the {@code sluice} health component.
 */
@NullMarked
package dev.sluice.boot.actuate;

import org.jspecify.annotations.NullMarked;
