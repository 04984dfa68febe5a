package dev.sluice.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/**
 * The timing decorator over the Redis store, whose asynchronous decisions complete on other
 * threads: every decision is forwarded as the store makes it, and timed once it completes. That
 * the decorator keeps the whole store contract is checked over the in-memory store
 * ({@link TimedInMemoryStoreContractTest}), and the Redis store's by its own module.
 */
@ExtendWith(RedisExtension.class)
class TimedRedisStoreTest {

    @Test
    void everyDecisionOfTheRedisStoreIsForwardedAndTimed(RedisServer server) {
        RedissonClient client = RedisClients.connect(server);
        try {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            RateLimitStore timed = new TimedRateLimitStore(RedissonRateLimitStore.builder(client)
                    .timeout(RedisClients.PATIENT).build(), meters);
            List<Tier> tiers = List.of(Tier.of(3, Duration.ofMinutes(1), Algorithm.TOKEN_BUCKET));
            String key = "timed:" + UUID.randomUUID();

            assertThat(timed.tryAcquire(key, tiers, 1).remaining()).isEqualTo(2);
            assertThat(timed.tryAcquireAsync(key, tiers, 1).toCompletableFuture().join().remaining()).isEqualTo(1);
            assertThat(timed.reserve(key, tiers, 1, Duration.ZERO).decision().remaining()).isZero();
            Decision rejected = timed.reserveAsync(key, tiers, 1, Duration.ZERO).toCompletableFuture().join().decision();
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.retryAfter()).isBetween(Duration.ofSeconds(19), Duration.ofSeconds(20));

            assertThat(meters.get("sluice.store.latency").tag("store", "RedissonRateLimitStore").timer().count())
                    .as("decisions timed").isEqualTo(4);
        } finally {
            RedisClients.shutDown(client);
        }
    }
}
