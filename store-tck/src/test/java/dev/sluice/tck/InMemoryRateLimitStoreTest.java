package dev.sluice.tck;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;

/** The in-memory store against the whole contract. */
class InMemoryRateLimitStoreTest extends RateLimitStoreContract {

    @Override
    protected RateLimitStore createStore(MutableClock clock) {
        return InMemoryRateLimitStore.builder().clock(clock).build();
    }
}
