package dev.sluice.redisson;

import dev.sluice.RateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.tck.MutableClock;
import org.redisson.api.RedissonClient;

/**
 * The token-bucket part of the store contract against Bucket4j's distributed buckets; the
 * suite reports the algorithms and options this store declares it does not support.
 */
class Bucket4jRedissonStoreContractTest extends RedisTopologiesContract {

    @Override
    protected RateLimitStore createStore(RedissonClient client, MutableClock clock) {
        return Bucket4jRedissonStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build();
    }
}
