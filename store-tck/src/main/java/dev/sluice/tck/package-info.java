/**
 * The store contract suite: {@link dev.sluice.tck.RateLimitStoreContract}, which every
 * {@link dev.sluice.RateLimitStore} extends in its tests, and the
 * {@link dev.sluice.tck.MutableClock} it moves time with.
 */
package dev.sluice.tck;
