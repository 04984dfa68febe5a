package dev.sluice.boot.metrics;

import dev.sluice.RateLimitStore;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import dev.sluice.tck.RateLimitStoreContract;
import dev.sluice.tck.RateLimitStores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/**
 * The whole store contract against the Redis store, timed as an application with metrics times
 * it, on one server: what the decorator forwards does not depend on the topology, which the Redis
 * store's own contract tests cover.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TimedRedisStoreContractTest extends RateLimitStoreContract {

    private RedissonClient client;

    @BeforeAll
    void connect(RedisServer server) {
        client = RedisClients.connect(server);
    }

    @AfterAll
    void disconnect() {
        client.shutdown();
    }

    @Override
    protected RateLimitStore createStore(MutableClock clock) {
        return new TimedRateLimitStore(
                RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build(),
                new SimpleMeterRegistry());
    }

    @Override
    protected void clear(RateLimitStore store) {
        RateLimitStores.clear(store);
    }
}
