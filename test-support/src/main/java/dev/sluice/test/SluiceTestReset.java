package dev.sluice.test;

import dev.sluice.RateLimitStore;
import dev.sluice.tck.RateLimitStores;
import java.time.Instant;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Puts a test's application context back as it started: the store the limiters decide in (the
 * primary one, or every store when none is) cleared, the clock set back.
 */
final class SluiceTestReset {

    private final TestClock clock;
    private final Instant start;
    private final ObjectProvider<RateLimitStore> stores;

    SluiceTestReset(TestClock clock, ObjectProvider<RateLimitStore> stores) {
        this.clock = clock;
        this.start = clock.instant();
        this.stores = stores;
    }

    void reset() {
        clock.rewind(start);
        decidingStores(stores).forEach(RateLimitStores::clear);
    }

    /** The store the limiters are given (the primary one), or every store when none is. */
    static List<RateLimitStore> decidingStores(ObjectProvider<RateLimitStore> stores) {
        RateLimitStore primary = stores.getIfUnique();
        return primary != null ? List.of(primary) : stores.orderedStream().toList();
    }
}
