/**
 * Limits on the application's calls to other HTTP APIs ({@code sluice.client.rules}): the rules,
 * what partners answer about their limits, the interceptor of {@code RestClient} and
 * {@code RestTemplate}, the filter of {@code WebClient}, and the auto-configuration applying them
 * to the clients Spring Boot builds.
 */
@NullMarked
package dev.sluice.boot.client;

import org.jspecify.annotations.NullMarked;
