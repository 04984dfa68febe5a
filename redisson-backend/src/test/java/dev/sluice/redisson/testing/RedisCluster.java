package dev.sluice.redisson.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A Redis Cluster of three masters, each a {@link RedisServer} process started by the test. */
public final class RedisCluster implements AutoCloseable {

    private static final Duration FORMING = Duration.ofSeconds(30);

    private final List<RedisServer> masters;

    private RedisCluster(List<RedisServer> masters) {
        this.masters = masters;
    }

    /**
     * Starts three nodes and joins them into one cluster, each master owning a third of the
     * slots.
     *
     * @return the running cluster, in state {@code ok}
     */
    public static RedisCluster start() {
        List<RedisServer> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                nodes.add(RedisServer.startClusterNode());
            }
            List<String> create = new ArrayList<>(List.of(RedisServer.executable("redis-cli"), "--cluster", "create"));
            nodes.forEach(node -> create.add("127.0.0.1:" + node.port()));
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            if (RedisServer.run(create) == null) {
                throw new IllegalStateException("redis-cli --cluster create failed for " + nodes);
            }
            long deadline = System.nanoTime() + FORMING.toNanos();
            for (RedisServer node : nodes) {
                while (!node.cli("CLUSTER", "INFO").contains("cluster_state:ok")) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the cluster did not form; " + node + " says:\n"
                                + node.cli("CLUSTER", "INFO"));
                    }
                    RedisServer.pause();
                }
            }
            return new RedisCluster(List.copyOf(nodes));
        } catch (RuntimeException e) {
            nodes.forEach(RedisServer::close);
            throw e;
        }
    }

    /**
     * The master nodes.
     *
     * @return three servers
     */
    public List<RedisServer> masters() {
        return masters;
    }

    /**
     * The addresses of the masters, for Redisson's cluster configuration.
     *
     * @return {@code redis://127.0.0.1:<port>} for each master
     */
    public List<String> addresses() {
        return masters.stream().map(RedisServer::address).toList();
    }

    /** Removes every key on every master. */
    public void flushAll() {
        masters.forEach(RedisServer::flushAll);
    }

    @Override
    public void close() {
        masters.forEach(RedisServer::close);
    }

    @Override
    public String toString() {
        return "Redis Cluster of " + masters;
    }
}
