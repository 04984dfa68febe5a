package dev.sluice.redisson;

import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofNanos;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Tier;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/** How Bucket4j buckets follow changing tiers, and which tiers they can hold. */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Bucket4jRedissonStoreTest {

    private RedissonClient client;
    private Bucket4jRedissonStore store;

    @BeforeAll
    void connect(RedisServer server) {
        client = RedisClients.connect(server);
        store = Bucket4jRedissonStore.builder(client).timeout(RedisClients.PATIENT)
                .clock(new MutableClock(Instant.parse("2200-01-01T00:00:00Z"))).build();
    }

    @AfterAll
    void disconnect() {
        client.shutdown();
    }

    @Test
    void aRaisedLimitChargesTheCallOnce() {
        store.tryAcquire("raised", List.of(Tier.of(10, ofMinutes(1), TOKEN_BUCKET)), 1);

        assertThat(store.tryAcquire("raised", List.of(Tier.of(20, ofMinutes(1), TOKEN_BUCKET)), 1).remaining())
                .isEqualTo(18);
        assertThat(store.tryAcquireAsync("raised", List.of(Tier.of(30, ofMinutes(1), TOKEN_BUCKET)), 1)
                .toCompletableFuture().join().remaining()).isEqualTo(27);
    }

    @Test
    void aTierRefillingFasterThanATokenANanosecondIsRefusedByName() {
        Tier fastest = Tier.of(1_000_000, ofMillis(1), TOKEN_BUCKET);
        Tier tooFast = Tier.of(1_000_001, ofMillis(1), TOKEN_BUCKET);

        assertThat(store.supports(fastest)).isTrue();
        assertThat(store.supports(tooFast)).isFalse();
        assertThatThrownBy(() -> store.tryAcquire("too-fast", List.of(tooFast), 1))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining(tooFast.toString());
    }

    @Test
    void aWindowLongerThanBucket4jCountsInNanosecondsIsRefusedByName() {
        Tier longest = Tier.of(1, ofNanos(Long.MAX_VALUE).truncatedTo(ChronoUnit.MILLIS), TOKEN_BUCKET);
        Tier tooLong = Tier.of(1, longest.window().plusMillis(1), TOKEN_BUCKET);

        assertThat(store.supports(longest)).isTrue();
        assertThat(store.tryAcquire("longest", List.of(longest), 1).allowed()).isTrue();
        assertThat(store.supports(tooLong)).isFalse();
    }

    @Test
    void theOrderOfTheTiersDoesNotMatter() {
        Tier perMinute = Tier.of(1, ofMinutes(1), TOKEN_BUCKET);
        Tier perHour = Tier.of(10, ofHours(1), TOKEN_BUCKET);
        store.tryAcquire("ordered", List.of(perMinute, perHour), 1);

        assertThat(store.tryAcquire("ordered", List.of(perHour, perMinute), 1).allowed()).isFalse();
    }
}
