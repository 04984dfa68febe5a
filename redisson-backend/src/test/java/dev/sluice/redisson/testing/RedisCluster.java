package dev.sluice.redisson.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A Redis Cluster of three masters, and optionally a replica of each, every node a
 * {@link RedisServer} process started by the test.
 */
public final class RedisCluster implements AutoCloseable {

    private static final Duration FORMING = Duration.ofSeconds(30);

    private final List<RedisServer> nodes;

    private RedisCluster(List<RedisServer> nodes) {
        this.nodes = nodes;
    }

    /**
     * Starts three masters, each owning a third of the slots.
     *
     * @return the running cluster, in state {@code ok}
     */
    public static RedisCluster start() {
        return start(0, Duration.ofSeconds(5));
    }

    /**
     * Starts three masters and a replica of each, for failover tests: the cluster takes a node
     * that is silent for a second for failed, and promotes its replica.
     *
     * @return the running cluster, in state {@code ok}, every replica in sync
     */
    public static RedisCluster startWithReplicas() {
        return start(1, Duration.ofSeconds(1));
    }

    private static RedisCluster start(int replicasPerMaster, Duration nodeTimeout) {
        List<RedisServer> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3 * (1 + replicasPerMaster); i++) {
                nodes.add(RedisServer.startClusterNode(nodeTimeout));
            }
            List<String> create = new ArrayList<>(List.of(RedisServer.executable("redis-cli"), "--cluster", "create"));
            nodes.forEach(node -> create.add("127.0.0.1:" + node.port()));
            create.addAll(List.of("--cluster-replicas", String.valueOf(replicasPerMaster), "--cluster-yes"));
            if (RedisServer.run(create) == null) {
                throw new IllegalStateException("redis-cli --cluster create failed for " + nodes);
            }
            RedisCluster cluster = new RedisCluster(List.copyOf(nodes));
            for (RedisServer node : nodes) {
                await("the cluster to form; " + node + " says:\n" + node.cli("CLUSTER", "INFO"),
                        () -> node.cli("CLUSTER", "INFO").contains("cluster_state:ok"));
            }
            if (replicasPerMaster > 0) {
                cluster.masters().forEach(cluster::awaitReplica);
            }
            return cluster;
        } catch (RuntimeException e) {
            nodes.forEach(RedisServer::close);
            throw e;
        }
    }

    /** Polls {@code condition} for up to 30 seconds. */
    public static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + FORMING.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            RedisServer.waitBriefly();
        }
    }

    /**
     * The nodes that are masters now.
     *
     * @return the running masters
     */
    public List<RedisServer> masters() {
        return nodes.stream().filter(RedisServer::isAlive).filter(node -> role(node).equals("master")).toList();
    }

    /**
     * The addresses of the masters, for Redisson's cluster configuration.
     *
     * @return {@code redis://127.0.0.1:<port>} for each master
     */
    public List<String> addresses() {
        return masters().stream().map(RedisServer::address).toList();
    }

    /**
     * The master that holds a key now.
     *
     * @param key a key
     * @return the running master owning its slot; empty while its slot has none
     */
    public Optional<RedisServer> masterOf(String key) {
        RedisServer any = masters().get(0);
        int slot = Integer.parseInt(any.cli("CLUSTER", "KEYSLOT", key));
        for (String line : any.cli("CLUSTER", "NODES").split("\n")) {
            String[] fields = line.trim().split(" ");
            if (!fields[2].contains("master") || fields[2].contains("fail")) {
                continue;
            }
            if (owns(line, slot)) {
                return Optional.of(node(fields[1]));
            }
        }
        return Optional.empty();
    }

    /**
     * Who owns each slot now, read once: for tests that place many keys on chosen masters.
     *
     * @return the running master owning a slot, as {@link #masterOf} would say of a key in it
     */
    public IntFunction<RedisServer> slotOwners() {
        List<String> masterLines = masters().get(0).cli("CLUSTER", "NODES").lines()
                .filter(line -> line.split(" ")[2].contains("master") && !line.split(" ")[2].contains("fail"))
                .toList();
        return slot -> masterLines.stream().filter(line -> owns(line, slot)).findFirst()
                .map(line -> node(line.split(" ")[1]))
                .orElseThrow(() -> new IllegalStateException("no master owns slot " + slot));
    }

    /**
     * The replica of a master.
     *
     * @param master a master
     * @return its replica
     */
    public RedisServer replicaOf(RedisServer master) {
        String masterId = master.cli("CLUSTER", "MYID");
        for (String line : master.cli("CLUSTER", "NODES").split("\n")) {
            String[] fields = line.trim().split(" ");
            if (fields[2].contains("slave") && fields[3].equals(masterId) && !fields[2].contains("fail")) {
                return node(fields[1]);
            }
        }
        throw new IllegalStateException(master + " has no replica");
    }

    /**
     * Waits until a master's replica has processed everything the master had written when
     * this was called.
     *
     * @param master a master
     */
    public void awaitReplica(RedisServer master) {
        RedisServer replica = replicaOf(master);
        long written = Long.parseLong(info(master, "master_repl_offset"));
        await("the replica of " + master + " to catch up", () -> info(replica, "master_link_status").equals("up")
                && Long.parseLong(info(replica, "slave_repl_offset")) >= written);
    }

    /**
     * Promotes a master's replica with {@code CLUSTER FAILOVER}, which waits for the replica to
     * catch up first, and waits for the cluster to agree.
     *
     * @param master the master to demote
     * @return the new master
     */
    public RedisServer failOver(RedisServer master) {
        RedisServer replica = replicaOf(master);
        replica.cli("CLUSTER", "FAILOVER");
        await("the failover of " + master, () -> role(replica).equals("master") && role(master).equals("slave")
                && replica.cli("CLUSTER", "INFO").contains("cluster_state:ok"));
        return replica;
    }

    /**
     * Moves the slot of a key to another master, as {@code redis-cli --cluster reshard} does: the
     * target imports the slot, the owner migrates its keys one at a time with {@code pause} after
     * each, so that calls meet the slot half moved, then every master learns the new owner.
     *
     * @param key    a key of the slot
     * @param target the master to own it
     * @param pause  how long to wait after each key moved
     */
    public void moveSlot(String key, RedisServer target, Duration pause) {
        RedisServer owner = masterOf(key).orElseThrow();
        String slot = owner.cli("CLUSTER", "KEYSLOT", key);
        String targetId = target.cli("CLUSTER", "MYID");
        target.cli("CLUSTER", "SETSLOT", slot, "IMPORTING", owner.cli("CLUSTER", "MYID"));
        owner.cli("CLUSTER", "SETSLOT", slot, "MIGRATING", targetId);
        String moving;
        while (!(moving = owner.cli("CLUSTER", "GETKEYSINSLOT", slot, "1")).isEmpty()) {
            owner.cli("MIGRATE", "127.0.0.1", String.valueOf(target.port()), moving, "0", "5000");
            LockSupport.parkNanos(pause.toNanos());
        }
        for (RedisServer master : masters()) {
            master.cli("CLUSTER", "SETSLOT", slot, "NODE", targetId);
        }
        await("every master to agree that " + target + " owns slot " + slot,
                () -> masters().stream().allMatch(master -> master.cli("CLUSTER", "NODES").lines()
                        .anyMatch(line -> line.startsWith(targetId) && owns(line, Integer.parseInt(slot)))));
    }

    private static boolean owns(String nodesLine, int slot) {
        String[] fields = nodesLine.trim().split(" ");
        for (String range : Arrays.asList(fields).subList(8, fields.length)) {
            if (range.startsWith("[")) {
                continue;
            }
            String[] bounds = range.split("-");
            if (Integer.parseInt(bounds[0]) <= slot && slot <= Integer.parseInt(bounds[bounds.length - 1])) {
                return true;
            }
        }
        return false;
    }

    private static String role(RedisServer node) {
        return node.cli("ROLE").split("\n")[0].trim();
    }

    private static String info(RedisServer node, String field) {
        return node.cli("INFO", "replication").lines().filter(line -> line.startsWith(field + ":"))
                .map(line -> line.substring(field.length() + 1).trim()).findFirst().orElse("");
    }

    private RedisServer node(String address) {
        int port = Integer.parseInt(address.substring(address.indexOf(':') + 1, address.indexOf('@')));
        return nodes.stream().filter(node -> node.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("no node listens on " + address));
    }

    /** Removes every key on every master. */
    public void flushAll() {
        masters().forEach(RedisServer::flushAll);
    }

    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
    }

    @Override
    public String toString() {
        return "Redis Cluster of " + nodes;
    }
}
