package dev.sluice.redisson;

import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Concurrent decisions leave together: while two sends are in flight the others gather, and go
 * as one pipelined batch, each still one script call with its own answer. It holds on a client
 * configured as Redisson's defaults have it, where each command otherwise holds a connection
 * until its reply.
 */
class ScriptPipelineTest {

    @Test
    void decisionsThatComeWhileTheServerIsBusyLeaveTogetherAndEachGetsItsOwnAnswer() {
        try (RedisServer server = RedisServer.start()) {
            Config config = new Config();
            config.useSingleServer().setAddress(server.address());
            RedissonClient client = Redisson.create(config);
            try {
                RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
                List<Tier> tiers = List.of(Tier.of(100, ofMinutes(10), Algorithm.FIXED_WINDOW));
                store.tryAcquire("warm-up", tiers, 1);

                // Paused, the server reads nothing it must run, so the decisions below pile up in the store.
                server.cli("CLIENT", "PAUSE", "1000", "WRITE");
                long readsBefore = stat(server, "total_reads_processed");
                List<CompletableFuture<Decision>> decisions = new ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    decisions.add(store.tryAcquireAsync("shared", tiers, 1).toCompletableFuture());
                }
                server.cli("CLIENT", "UNPAUSE");
                List<Long> remaining = decisions.stream().map(CompletableFuture::join).map(Decision::remaining).toList();
                long reads = stat(server, "total_reads_processed") - readsBefore;

                assertThat(remaining).as("each decision its own answer").doesNotHaveDuplicates()
                        .allSatisfy(left -> assertThat(left).isBetween(36L, 99L));
                assertThat(server.tierState("sluice:{shared}:fw600000", "n")).isEqualTo(64);
                // Sent one by one, 64 decisions take about 64 reads of the server (besides the three
                // commands of this test); together, a handful.
                assertThat(reads).as("reads by the server for 64 decisions").isLessThanOrEqualTo(10);
            } finally {
                client.shutdown();
            }
        }
    }

    private static long stat(RedisServer server, String name) {
        return server.cli("INFO", "stats").lines().filter(line -> line.startsWith(name + ":"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf(':') + 1).trim()))
                .findFirst().orElseThrow();
    }
}
