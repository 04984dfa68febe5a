/**
 * Sluice's Spring Boot auto-configuration: the {@code sluice.*} properties, the store (in memory,
 * or Redis with its connection and start-up warm-up), the limits of {@code sluice.limits} and
 * their refresh, the limiters that count locally and sync with Redis, and the exception that
 * fails start-up on configuration that cannot work. The auto-configurations of each part of the
 * starter (web, client, actuator, metrics) sit in their own packages, beside what they configure.
 */
@NullMarked
package dev.sluice.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
