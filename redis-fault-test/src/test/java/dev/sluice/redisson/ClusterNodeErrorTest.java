package dev.sluice.redisson;

import static java.time.Duration.ofHours;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/**
 * One master's error beside healthy ones: the decisions of one send span every master of the
 * cluster, and each gets its own master's answer. A master that lost the script runs its calls
 * once it has it again, and the calls other masters ran are neither sent again (counted twice)
 * nor failed; a master that refuses to run scripts fails its own calls only.
 */
@ExtendWith(RedisExtension.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClusterNodeErrorTest {

    private static final int CALLS = 1_000;
    private static final Tier TIER = Tier.of(CALLS, ofHours(1), Algorithm.FIXED_WINDOW);

    private RedissonClient client;
    private RedissonRateLimitStore store;

    @BeforeEach
    void connect(RedisCluster cluster) {
        client = RedisClients.connect(cluster);
        // Patient: a loaded machine must not fail, nor refuse as overloaded, a call this test counts.
        store = RedissonRateLimitStore.builder(client).keyPrefix("node-error-" + UUID.randomUUID())
                .timeout(RedisClients.PATIENT).maxQueueWait(RedisClients.PATIENT).build();
    }

    @AfterEach
    void close() {
        RedisClients.shutDown(client);
    }

    @Test
    void aMasterThatLostTheScriptRunsItsCallsAndNoOtherMastersCallIsSentAgain(RedisCluster cluster) {
        RedisServer flushed = cluster.masters().get(0);
        // Each round, one send after another spans all three masters while one of them lost the script.
        for (int round = 0; round < 5; round++) {
            List<String> keys = keys(cluster, flushed, "round" + round, 10);
            flushed.cli("SCRIPT", "FLUSH");

            Map<String, Long> remaining = new TreeMap<>();
            List<CompletableFuture<Decision>> decided = decideAll(keys);
            for (int i = 0; i < keys.size(); i++) {
                Decision decision = decided.get(i).join();
                if (!decision.allowed() || decision.remaining() != CALLS - 1) {
                    remaining.put(keys.get(i), decision.remaining());
                }
            }

            assertThat(remaining).as("round %d: calls not admitted once, with what they had remaining", round)
                    .isEmpty();
            // A call Redis ran twice holds 2: the next leaves 997.
            assertThat(decideAll(keys).stream().map(CompletableFuture::join).map(Decision::remaining).distinct())
                    .as("round %d: what each key's second call had remaining", round).containsExactly(CALLS - 2L);
        }
    }

    @Test
    void aMasterThatRefusesToRunScriptsFailsItsOwnCallsOnly(RedisCluster cluster) {
        RedisServer full = cluster.masters().get(1);
        // A fiftieth of the calls: the failures they see, which count against the store's breaker, never open it.
        List<String> keys = keys(cluster, full, "full", 50);
        IntFunction<RedisServer> owners = cluster.slotOwners();
        full.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
        full.cli("CONFIG", "SET", "maxmemory", "1");
        List<CompletableFuture<Decision>> decided;
        try {
            decided = decideAll(keys);
            CompletableFuture.allOf(decided.toArray(CompletableFuture[]::new)).handle((all, failure) -> null).join();
        } finally {
            full.cli("CONFIG", "SET", "maxmemory", "0");
        }

        List<String> healthyNotAdmittedOnce = new ArrayList<>();
        int fullFailed = 0;
        for (int i = 0; i < keys.size(); i++) {
            boolean onFull = owners.apply(ScriptPipeline.slot(keys.get(i))) == full;
            CompletableFuture<Decision> decision = decided.get(i);
            if (onFull) {
                fullFailed += decision.isCompletedExceptionally() ? 1 : 0;
            } else if (decision.isCompletedExceptionally() || decision.join().remaining() != CALLS - 1) {
                healthyNotAdmittedOnce.add(keys.get(i) + ": " + decision.handle((d, failure) -> d != null
                        ? "remaining " + d.remaining() : failure.toString()).join());
            }
        }
        assertThat(healthyNotAdmittedOnce).as("calls of healthy masters not admitted once").isEmpty();
        assertThat(fullFailed).as("calls of the master out of memory that failed").isEqualTo(CALLS / 50);
    }

    /** Every key's call at once, so that sends carry calls of every master. */
    private List<CompletableFuture<Decision>> decideAll(List<String> keys) {
        return keys.stream().map(key -> store.tryAcquireAsync(key, List.of(TIER), 1).toCompletableFuture()).toList();
    }

    /** {@value #CALLS} keys, one in {@code every} on {@code master} and the rest on the others, interleaved. */
    private static List<String> keys(RedisCluster cluster, RedisServer master, String prefix, int every) {
        IntFunction<RedisServer> owners = cluster.slotOwners();
        List<String> keys = new ArrayList<>(CALLS);
        for (int i = 0; keys.size() < CALLS; i++) {
            String key = prefix + ":" + i;
            boolean there = owners.apply(ScriptPipeline.slot(key)) == master;
            if (there == (keys.size() % every == every - 1)) {
                keys.add(key);
            }
        }
        return keys;
    }
}
