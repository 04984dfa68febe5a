package dev.sluice.boot.metrics;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.tck.MutableClock;
import dev.sluice.tck.RateLimitStoreContract;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The whole store contract against the in-memory store, timed as an application with metrics times it. */
class TimedInMemoryStoreContractTest extends RateLimitStoreContract {

    @Override
    protected RateLimitStore createStore(MutableClock clock) {
        return new TimedRateLimitStore(InMemoryRateLimitStore.builder().clock(clock).build(), new SimpleMeterRegistry());
    }
}
