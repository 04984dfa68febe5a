package dev.sluice.redisson.testing;

import dev.sluice.redisson.RedissonClientConfigs;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Redisson clients for tests, configured as {@link RedissonClientConfigs} recommends. */
public final class RedisClients {

    private RedisClients() {
    }

    /**
     * A client of a standalone server.
     *
     * @param server the server
     * @return a new client; shut it down after use
     */
    public static RedissonClient connect(RedisServer server) {
        Config config = RedissonClientConfigs.singleServer(server.address());
        config.useSingleServer().setTimeout(5_000).setRetryAttempts(2);
        return Redisson.create(config);
    }

    /**
     * A client of a cluster.
     *
     * @param cluster the cluster
     * @return a new client; shut it down after use
     */
    public static RedissonClient connect(RedisCluster cluster) {
        Config config = RedissonClientConfigs.cluster(cluster.addresses());
        config.useClusterServers().setTimeout(5_000).setRetryAttempts(2);
        return Redisson.create(config);
    }
}
