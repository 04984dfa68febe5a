package dev.sluice.test;

import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.tck.MutableClock;
import java.time.Instant;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The test clock of {@link AutoConfigureSluiceTest}, which refuses to move while the limiters
 * decide in a store that does not read it: the test would believe time had passed where the
 * store counts by another clock (a Redis server's), and fail on what looks like a wrong limit.
 */
final class TestClock extends MutableClock {

    private final ObjectProvider<RateLimitStore> stores;

    TestClock(Instant start, ObjectProvider<RateLimitStore> stores) {
        super(start);
        this.stores = stores;
    }

    @Override
    public void set(Instant instant) {
        for (RateLimitStore store : SluiceTestReset.decidingStores(stores)) {
            RateLimitStore beneath = ForwardingRateLimitStore.beneath(store);
            if (!(beneath instanceof InMemoryRateLimitStore)) {
                throw new IllegalStateException("The test moved the clock, but the limiters decide in "
                        + beneath.getClass().getName() + ", which counts by its own clock (a Redis server's)"
                        + " and cannot follow the test's. Let the test decide in an in-memory store on the test"
                        + " clock: @AutoConfigureSluiceTest, whose store is IN_MEMORY unless set otherwise;"
                        + " keep store = CONFIGURED only for tests that do not move time.");
            }
        }
        rewind(instant);
    }

    /** Sets the clock whatever the store, as the reset before each test does. */
    void rewind(Instant instant) {
        super.set(instant);
    }
}
