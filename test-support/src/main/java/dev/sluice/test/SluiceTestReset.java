package dev.sluice.test;

import dev.sluice.RateLimitStore;
import dev.sluice.tck.MutableClock;
import dev.sluice.tck.RateLimitStores;
import java.time.Instant;
import org.springframework.beans.factory.ObjectProvider;

/** Puts a test's application context back as it started: every store cleared, the clock set back. */
final class SluiceTestReset {

    private final MutableClock clock;
    private final Instant start;
    private final ObjectProvider<RateLimitStore> stores;

    SluiceTestReset(MutableClock clock, ObjectProvider<RateLimitStore> stores) {
        this.clock = clock;
        this.start = clock.instant();
        this.stores = stores;
    }

    void reset() {
        clock.set(start);
        stores.orderedStream().forEach(RateLimitStores::clear);
    }
}
