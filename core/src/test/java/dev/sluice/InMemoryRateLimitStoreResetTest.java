package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Forgetting keys keeps the restricted keys' accounting right: a key forgotten while kept apart
 * gives its room back, so that the next restricted key is kept apart in its place.
 */
class InMemoryRateLimitStoreResetTest {

    private static final List<Tier> TWO_PER_MINUTE = List.of(Tier.of(2, ofMinutes(1), FIXED_WINDOW));

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());

    /** Restricts a key with one call, so that it is used as rarely as the keys of a flood. */
    private static void restrict(InMemoryRateLimitStore store, String key) {
        assertThat(store.tryAcquire(key, TWO_PER_MINUTE, 2).remaining()).isZero();
    }

    /** A flood that drops every key that is not kept apart: each was used once, as recently. */
    private static void flood(InMemoryRateLimitStore store) {
        for (int i = 0; i < 1_000; i++) {
            store.tryAcquire("flood:" + i, TWO_PER_MINUTE, 1);
        }
    }

    @Test
    void aResetKeyGivesItsRoomAmongTheRestrictedKeysBack() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock)
                .maximumKeys(10).maximumRestrictedKeys(1).build();
        restrict(store, "first");
        store.reset("first", TWO_PER_MINUTE);

        restrict(store, "second");
        flood(store);
        assertThat(store.tryAcquire("second", TWO_PER_MINUTE, 1).allowed()).as("kept apart from the flood").isFalse();
    }

    @Test
    void clearGivesEveryRoomAmongTheRestrictedKeysBack() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock)
                .maximumKeys(10).maximumRestrictedKeys(2).build();
        restrict(store, "first");
        restrict(store, "second");
        store.clear();
        assertThat(store.estimatedKeyCount()).isZero();

        restrict(store, "third");
        restrict(store, "fourth");
        flood(store);
        assertThat(store.tryAcquire("third", TWO_PER_MINUTE, 1).allowed()).as("kept apart from the flood").isFalse();
        assertThat(store.tryAcquire("fourth", TWO_PER_MINUTE, 1).allowed()).as("kept apart from the flood").isFalse();
    }
}
