/**
 * The store contract suite: {@link dev.sluice.tck.RateLimitStoreContract}, which every
 * {@link dev.sluice.RateLimitStore} extends in its tests, and the
 * {@link dev.sluice.tck.MutableClock} it moves time with.
 */
@NullMarked
package dev.sluice.tck;

import org.jspecify.annotations.NullMarked;
