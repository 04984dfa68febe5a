/**
 * The Sluice engine: {@link dev.sluice.RateLimiter} (the programmatic API, which the
 * annotation aspect also uses), {@link dev.sluice.Tier} and {@link dev.sluice.Decision}, the
 * {@link dev.sluice.RateLimitStore} SPI and the in-process
 * {@link dev.sluice.InMemoryRateLimitStore}. No Spring; time comes only from an injected
 * {@link java.time.InstantSource}.
 */
@NullMarked
package dev.sluice;

import org.jspecify.annotations.NullMarked;
