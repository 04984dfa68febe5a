package dev.sluice.boot.metrics;

import dev.sluice.RateLimitStore;
import dev.sluice.redisson.RedisTopologiesContract;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.tck.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.redisson.api.RedissonClient;

/** The whole store contract against the Redis store, timed as an application with metrics times it. */
class TimedRedisStoreContractTest extends RedisTopologiesContract {

    @Override
    protected RateLimitStore createStore(RedissonClient client, MutableClock clock) {
        return new TimedRateLimitStore(
                RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build(),
                new SimpleMeterRegistry());
    }
}
