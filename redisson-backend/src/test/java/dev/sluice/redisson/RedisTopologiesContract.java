package dev.sluice.redisson;

import dev.sluice.RateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import dev.sluice.tck.RateLimitStoreContract;
import dev.sluice.tck.RateLimitStores;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/**
 * The whole store contract against a Redis store, on a real server and on a real cluster; other
 * modules' tests extend it too, for stores decorating a Redis store.
 */
@ExtendWith(RedisExtension.class)
public abstract class RedisTopologiesContract {

    /**
     * Creates the store under test.
     *
     * @param client a client of the topology under test
     * @param clock  the test clock
     * @return the store
     */
    protected abstract RateLimitStore createStore(RedissonClient client, MutableClock clock);

    /**
     * Forgets every key of the store under test, as test support does.
     *
     * @param store the store under test
     */
    protected void clear(RateLimitStore store) {
        RateLimitStores.clear(store);
    }

    /** The contract on one topology, through one client for all its tests. */
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract class OnTopology extends RateLimitStoreContract {

        RedissonClient client;

        @AfterAll
        void disconnect() {
            client.shutdown();
        }

        @Override
        protected RateLimitStore createStore(MutableClock clock) {
            return RedisTopologiesContract.this.createStore(client, clock);
        }

        @Override
        protected void clear(RateLimitStore store) {
            RedisTopologiesContract.this.clear(store);
        }
    }

    @Nested
    class SingleNode extends OnTopology {

        @BeforeAll
        void connect(RedisServer server) {
            client = RedisClients.connect(server);
        }
    }

    @Nested
    class Cluster extends OnTopology {

        @BeforeAll
        void connect(RedisCluster cluster) {
            client = RedisClients.connect(cluster);
        }
    }
}
