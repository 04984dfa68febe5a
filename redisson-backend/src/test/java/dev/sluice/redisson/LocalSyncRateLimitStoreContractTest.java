package dev.sluice.redisson;

import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.tck.MutableClock;
import org.redisson.api.RedissonClient;

/**
 * The store contract against local counting synced with the Redis store: one instance alone
 * decides exactly as the store would, for the tiers it supports; the suite reports the others
 * (sliding logs, token buckets, blocks) as unsupported and checks they are refused by name.
 */
class LocalSyncRateLimitStoreContractTest extends RedisTopologiesContract {

    /** The store the latest store under test syncs with. */
    private RedissonRateLimitStore shared;

    @Override
    protected RateLimitStore createStore(RedissonClient client, MutableClock clock) {
        shared = RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build();
        return LocalSyncRateLimitStore.builder(shared).clock(clock).build();
    }

    /** Forgets the keys held locally, then those of the store synced with. */
    @Override
    protected void clear(RateLimitStore store) {
        super.clear(store);
        shared.clear();
    }
}
