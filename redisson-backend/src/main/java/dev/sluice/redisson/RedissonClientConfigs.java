package dev.sluice.redisson;

import java.util.Collection;
import org.redisson.config.BaseMasterSlaveServersConfig;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;

/**
 * Redisson client configurations that suit Sluice: netty threads near the core count, a small pool
 * kept open on masters (scripts write), replicas known to the client so that a planned failover
 * costs nothing, and topology read twice a second so that decisions resume within a second after a
 * replica takes over from a failed master (half a second to learn of it, half a second for the
 * store's circuit breaker to try again). Throughput does not depend on them: the store pipelines
 * concurrent decisions itself, so a client with Redisson's defaults does as well on one server.
 * Adjust the returned configuration as needed (passwords, TLS) before {@code Redisson.create(config)}.
 */
public final class RedissonClientConfigs {

    private static final int POOL_SIZE = 8;

    private RedissonClientConfigs() {
    }

    /**
     * A configuration for one server.
     *
     * @param address such as {@code redis://localhost:6379}
     * @return the configuration
     */
    public static Config singleServer(String address) {
        Config config = base();
        config.useSingleServer().setAddress(address)
                .setConnectionPoolSize(POOL_SIZE)
                .setConnectionMinimumIdleSize(POOL_SIZE);
        return config;
    }

    /**
     * A configuration for a Redis Cluster. A planned failover ({@code CLUSTER FAILOVER}) or a
     * slot migration costs callers nothing: the client follows the cluster's redirections to nodes
     * it knows. It reads the cluster's topology every 500 ms (Redisson's default is every 5
     * seconds), so that decisions for the slots of a failed master resume within a second after
     * the cluster has promoted a replica.
     *
     * @param nodes addresses of some of its nodes, such as {@code redis://10.0.0.1:6379}
     * @return the configuration
     */
    public static Config cluster(Collection<String> nodes) {
        Config config = base();
        // Learn of a failed master's replacement within half a second: until then, calls for its slots fail.
        replicasKnown(config.useClusterServers().addNodeAddress(nodes.toArray(String[]::new)).setScanInterval(500));
        return config;
    }

    /**
     * A configuration for a master found through Redis Sentinel. Like the cluster's, it reads
     * the topology every 500 ms, so that decisions resume within a second after the sentinels
     * promote a replica; a single sentinel is enough to start.
     *
     * @param masterName the name the sentinels monitor the master under
     * @param sentinels  addresses of some of the sentinels, such as {@code redis://10.0.0.1:26379}
     * @return the configuration
     */
    public static Config sentinel(String masterName, Collection<String> sentinels) {
        Config config = base();
        replicasKnown(config.useSentinelServers().setMasterName(masterName)
                .addSentinelAddress(sentinels.toArray(String[]::new))
                .setCheckSentinelsList(false)
                .setScanInterval(500));
        return config;
    }

    /**
     * Scripts write, so they run on masters: a small pool kept open there. Replicas stay known
     * (Redisson's default read mode), with connections opened only when needed: when a planned
     * failover promotes one, the client follows the cluster's redirection to it at once. Told to
     * read from masters only, Redisson forgets replicas, and calls for the moved slots fail until
     * its next topology scan (up to a second, 600 to 900 ms measured) or wait that long.
     */
    private static void replicasKnown(BaseMasterSlaveServersConfig<?> servers) {
        servers.setReadMode(ReadMode.SLAVE)
                .setSlaveConnectionMinimumIdleSize(0)
                .setMasterConnectionPoolSize(POOL_SIZE)
                .setMasterConnectionMinimumIdleSize(POOL_SIZE);
    }

    private static Config base() {
        int cores = Math.max(2, Runtime.getRuntime().availableProcessors());
        Config config = new Config();
        config.setNettyThreads(cores);
        config.setThreads(cores);
        return config;
    }
}
