package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Pausing and recounting in the in-memory store beyond the contract: the state they keep, and for how long. */
class InMemoryRateLimitStorePauseTest {

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());

    @Test
    void aPausedKeyWithoutStateIsHeldUntilThePauseEndsAndThenDropped() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> tiers = List.of(Tier.of(5, ofSeconds(1), FIXED_WINDOW));

        store.pause("k", tiers, ofMinutes(5));
        millis.addAndGet(ofMinutes(5).toMillis() - 1);
        assertThat(store.estimatedKeyCount()).as("paused").isEqualTo(1);
        assertThat(store.tryAcquire("k", tiers, 1).retryAfter()).isEqualTo(Duration.ofMillis(1));
        // Expiry is rounded up to the next 1,024 ms, and Caffeine sweeps in steps of about a second.
        millis.addAndGet(1 + 2_200);
        assertThat(store.estimatedKeyCount()).isZero();
    }

    @Test
    void aFloodOfOtherKeysCannotLiftAPause() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).maximumKeys(100).build();
        List<Tier> tiers = List.of(Tier.of(5, ofSeconds(1), FIXED_WINDOW));
        store.pause("partner", tiers, ofMinutes(5));
        store.tryAcquire("paused later", tiers, 1);
        store.pause("paused later", tiers, ofMinutes(5));

        for (int i = 0; i < 10_000; i++) {
            store.tryAcquire("flood:" + i, tiers, 1);
        }

        assertThat(store.tryAcquire("partner", tiers, 1).allowed()).as("paused before its first call").isFalse();
        assertThat(store.tryAcquire("paused later", tiers, 1).allowed()).isFalse();
        millis.addAndGet(ofMinutes(5).toMillis());
        assertThat(store.tryAcquire("partner", tiers, 1).allowed()).isTrue();
    }

    @Test
    void aRecountedCallKeepsItsKeyUntilItLeavesTheWindow() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> log = List.of(Tier.of(3, ofSeconds(10), SLIDING_LOG));
        store.tryAcquire("k", log, 1);
        millis.addAndGet(8_000);

        store.recount("k", log, 1, ofSeconds(8));
        millis.addAndGet(5_000);
        assertThat(store.estimatedKeyCount()).as("the call counts until 18 s").isEqualTo(1);
        assertThat(store.tryAcquire("k", log, 3).retryAfter()).isEqualTo(ofSeconds(5));
        millis.addAndGet(5_000 + 2_200);
        assertThat(store.estimatedKeyCount()).isZero();
    }

    @Test
    void aRecountForAKeyWithoutStateMakesNone() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        store.recount("k", List.of(Tier.of(5, ofMinutes(1), SLIDING_LOG)), 2, Duration.ZERO);
        assertThat(store.estimatedKeyCount()).isZero();
    }
}
