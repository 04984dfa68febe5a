/**
 * The store contract suite: {@link dev.sluice.tck.RateLimitStoreContract}, which every
 * {@link dev.sluice.RateLimitStore} extends in its tests, and the
 * {@link dev.sluice.tck.MutableClock} it moves time with, and
 * {@link dev.sluice.tck.RateLimitStores}, which forgets every key of a store between tests.
 */
@NullMarked
package dev.sluice.tck;

import org.jspecify.annotations.NullMarked;
