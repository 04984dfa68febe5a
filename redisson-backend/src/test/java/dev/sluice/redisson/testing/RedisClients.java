package dev.sluice.redisson.testing;

import dev.sluice.redisson.RedissonClientConfigs;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Redisson clients for tests, configured as {@link RedissonClientConfigs} recommends. */
public final class RedisClients {

    /**
     * The timeout of stores in tests of decisions rather than outages: a busy machine must not
     * turn a slow decision into a failure there.
     */
    public static final Duration PATIENT = Duration.ofSeconds(10);

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
     * Shuts a client down without waiting for the commands an outage left unanswered: Redisson
     * would wait up to 10 seconds for them.
     *
     * @param client the client
     */
    public static void shutDown(RedissonClient client) {
        client.shutdown(0, 1, TimeUnit.SECONDS);
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
