package dev.sluice.redisson;

import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Guards an undocumented Redisson behaviour that {@link RedissonClientConfigs} relies on: with a
 * pool of fewer than 10 connections, a connection goes back to the pool once a command is
 * written, so concurrent decisions share connections instead of queueing for one. Should a
 * Redisson upgrade change it, this test fails and the recommended configuration must be
 * measured again.
 */
class ConnectionSharingTest {

    @Test
    void concurrentDecisionsShareTheEightConnections() {
        try (RedisServer server = RedisServer.start()) {
            RedissonClient client = RedisClients.connect(server);
            try {
                RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
                List<Tier> tiers = List.of(Tier.of(1_000, ofMinutes(1), Algorithm.FIXED_WINDOW));
                store.tryAcquire("warm-up", tiers, 1);
                long before = inputBytes(server);
                store.tryAcquire("shared", tiers, 1);
                long oneDecision = inputBytes(server) - before;

                // Paused, the server reads commands but runs none: what it has read was written at once.
                server.cli("CLIENT", "PAUSE", "10000", "WRITE");
                long paused = inputBytes(server);
                List<CompletableFuture<?>> decisions = new ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    decisions.add(store.tryAcquireAsync("shared", tiers, 1).toCompletableFuture());
                }
                long written = 0;
                for (int poll = 0; poll < 100 && written < 60 * oneDecision; poll++) {
                    written = inputBytes(server) - paused;
                    RedisServer.waitBriefly();
                }
                server.cli("CLIENT", "UNPAUSE");
                decisions.forEach(CompletableFuture::join);

                // Holding a connection per command until its reply, 8 connections would carry about 8
                // (a pool of 16 was measured carrying 35).
                assertThat(written / oneDecision).as("decisions written to 8 connections while the server was paused")
                        .isGreaterThanOrEqualTo(60);
            } finally {
                client.shutdown();
            }
        }
    }

    private static long inputBytes(RedisServer server) {
        return server.cli("INFO", "stats").lines().filter(line -> line.startsWith("total_net_input_bytes:"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf(':') + 1).trim()))
                .findFirst().orElseThrow();
    }
}
