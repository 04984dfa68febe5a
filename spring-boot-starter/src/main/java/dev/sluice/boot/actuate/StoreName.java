package dev.sluice.boot.actuate;

import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.RateLimitStore;

/**
 * How the endpoint and the health component name a store: by the class of the store beneath any
 * decorators (such as the one timing it for metrics), as the metrics tag {@code store} names it.
 */
final class StoreName {

    private StoreName() {
    }

    /**
     * The name of a store.
     *
     * @param store a store, decorated or not
     * @return the simple name of the class of the store beneath its decorators
     */
    static String of(RateLimitStore store) {
        return ForwardingRateLimitStore.beneath(store).getClass().getSimpleName();
    }
}
