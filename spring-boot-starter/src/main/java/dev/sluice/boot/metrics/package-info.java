/**
 * Micrometer metrics and observations of Sluice's decisions: the listener counting them, the
 * store decorator timing them ({@code sluice.store.latency}), the gauges of the store's circuit
 * breaker, queue and local counting, and the auto-configurations that register them when the
 * application has a meter or observation registry.
 */
@NullMarked
package dev.sluice.boot.metrics;

import org.jspecify.annotations.NullMarked;
