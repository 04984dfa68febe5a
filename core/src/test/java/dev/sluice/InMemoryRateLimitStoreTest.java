package dev.sluice;

import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Memory bounds of the in-memory store; its decisions are the contract suite's business. */
class InMemoryRateLimitStoreTest {

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());

    @Test
    void dropsAKeyOnceItsStateIsBackToThatOfAFreshKey() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> tiers = List.of(Tier.of(10, ofSeconds(1), TOKEN_BUCKET), Tier.of(5, ofSeconds(3), SLIDING_LOG));
        store.tryAcquire("k", tiers, 2);

        millis.addAndGet(2_999);
        assertThat(store.estimatedKeyCount()).as("the log still holds an entry").isEqualTo(1);
        // Caffeine's timer wheel sweeps expired keys in steps of about a second.
        millis.addAndGet(1 + 1_100);
        assertThat(store.estimatedKeyCount()).isZero();
    }

    @Test
    void holdsNoMoreThanTheMaximumNumberOfKeys() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).maximumKeys(100).build();
        List<Tier> tiers = List.of(Tier.of(10, ofSeconds(60), SLIDING_LOG));
        for (int i = 0; i < 10_000; i++) {
            store.tryAcquire("flood:" + i, tiers, 1);
        }
        assertThat(store.estimatedKeyCount()).isLessThanOrEqualTo(100);
    }

    @Test
    void refusesANonPositiveBound() {
        assertThatThrownBy(() -> InMemoryRateLimitStore.builder().maximumKeys(0))
                .hasMessageContaining("maximumKeys must be at least 1");
    }
}
