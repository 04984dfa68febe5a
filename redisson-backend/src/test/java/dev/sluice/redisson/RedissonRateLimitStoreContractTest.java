package dev.sluice.redisson;

import dev.sluice.RateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.tck.MutableClock;
import org.redisson.api.RedissonClient;

/** The whole store contract, the client passing the time. */
class RedissonRateLimitStoreContractTest extends RedisTopologiesContract {

    @Override
    protected RateLimitStore createStore(RedissonClient client, MutableClock clock) {
        return RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build();
    }
}
