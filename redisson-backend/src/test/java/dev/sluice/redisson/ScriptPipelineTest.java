package dev.sluice.redisson;

import static java.time.Duration.ofDays;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Reservation;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.RedissonRateLimitStore.Call;
import dev.sluice.redisson.ScriptPipeline.ScriptCall;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Concurrent decisions leave together: while two sends are in flight the others gather, and go
 * as one pipelined batch, each still one script call with its own answer; calls that may
 * reserve go one send at a time, so that they reach the server in the order asked. It holds on
 * a client configured as Redisson's defaults have it, where each command otherwise holds a
 * connection until its reply. A reply that does not answer every call it was sent for is refused.
 */
class ScriptPipelineTest {

    private RedisServer server;
    private RedissonClient client;
    private RedissonRateLimitStore store;

    @BeforeEach
    void start() {
        server = RedisServer.start();
        // Redisson's defaults: a command holds its connection until its reply, so a second send in
        // flight takes a second connection, and the two may reach the server in either order.
        Config config = new Config();
        config.useSingleServer().setAddress(server.address());
        client = Redisson.create(config);
        // Decisions wait behind a paused server here for as long as the test holds it, on a machine that may be busy.
        store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).maxQueueWait(RedisClients.PATIENT)
                .build();
    }

    @AfterEach
    void stop() {
        client.shutdown();
        server.close();
    }

    @Test
    void oneResultAnswersIdenticalCallsInARowAndAReplyThatDoesNotAnswerEveryCallIsRefused() {
        List<Tier> tiers = List.of(Tier.of(100, ofMinutes(10), Algorithm.FIXED_WINDOW));
        List<Call> calls = List.of(store.call("a", tiers, 2, 0), store.call("a", tiers, 2, 0), store.call("a", tiers, 2, 0));
        byte[] admitted = result(1, 10, 3);
        byte[] rejected = result(0, 0, 3);

        assertThat(ScriptCall.replies(admitted, calls)).as("remaining, the cost fewer for each")
                .extracting(figures -> DecisionCodec.figure(figures, 2)).containsExactly(10L, 8L, 6L);
        assertThat(ScriptCall.replies(rejected, calls)).extracting(figures -> DecisionCodec.figure(figures, 0))
                .containsExactly(0L, 0L, 0L);
        assertThatThrownBy(() -> ScriptCall.replies(result(1, 10, 2), calls))
                .isInstanceOf(IllegalStateException.class).hasMessage("decide.lua answered 2 of 3 calls with 80 bytes");
        assertThatThrownBy(() -> ScriptCall.replies(result(1, 10, 4), calls))
                .isInstanceOf(IllegalStateException.class).hasMessage("decide.lua answered 0 of 3 calls with 80 bytes");
    }

    /** One result of decide.lua: allowed, remaining, and how many calls in a row it answers. */
    private static byte[] result(int allowed, int remaining, int run) {
        byte[] result = new byte[80];
        DecisionCodec.setFigure(result, 0, allowed);
        DecisionCodec.setFigure(result, 2, remaining);
        DecisionCodec.setFigure(result, 9, run);
        return result;
    }

    @Test
    void decisionsThatComeWhileTheServerIsBusyLeaveTogetherAndEachGetsItsOwnAnswer() {
        // A day's window, which the test's real seconds all but never cross: counts of one window.
        List<Tier> tiers = List.of(Tier.of(100, ofDays(1), Algorithm.FIXED_WINDOW));
        store.tryAcquire("warm-up", tiers, 1);

        // Paused, the server reads nothing it must run, so the decisions below pile up in the store.
        server.cli("CLIENT", "PAUSE", "1000", "WRITE");
        long readsBefore = info("stats", "total_reads_processed");
        List<CompletableFuture<Decision>> decisions = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            decisions.add(store.tryAcquireAsync("shared", tiers, 1).toCompletableFuture());
        }
        server.cli("CLIENT", "UNPAUSE");
        List<Long> remaining = decisions.stream().map(CompletableFuture::join).map(Decision::remaining).toList();
        long reads = info("stats", "total_reads_processed") - readsBefore;

        assertThat(remaining).as("each decision its own answer").doesNotHaveDuplicates()
                .allSatisfy(left -> assertThat(left).isBetween(36L, 99L));
        assertThat(server.tierState("sluice:{shared}:fw86400000", "n")).isEqualTo(64);
        // Sent one by one, 64 decisions take about 64 reads of the server (besides the three
        // commands of this test); together, a handful.
        assertThat(reads).as("reads by the server for 64 decisions").isLessThanOrEqualTo(10);
    }

    @Test
    void callsThatMayReserveReachTheServerOneSendAtATimeAndAreServedInTheOrderAsked() {
        List<Tier> bucket = List.of(Tier.of(10, ofSeconds(10), Algorithm.TOKEN_BUCKET));
        assertThat(store.tryAcquire("k", bucket, 10).allowed()).as("the bucket spent").isTrue();

        server.cli("CLIENT", "PAUSE", "5000", "WRITE");
        List<CompletableFuture<Reservation>> reservations = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            reservations.add(store.reserveAsync("k", bucket, 1, ofMinutes(1)).toCompletableFuture());
        }
        RedisCluster.await("the first send to reach the paused server", () -> info("clients", "blocked_clients") > 0);
        long deadline = System.nanoTime() + ofMillis(500).toNanos();
        while (System.nanoTime() < deadline) {
            assertThat(info("clients", "blocked_clients")).as("connections whose calls wait on the server")
                    .isEqualTo(1);
            RedisServer.waitBriefly();
        }
        server.cli("CLIENT", "UNPAUSE");

        List<Duration> delays = reservations.stream().map(CompletableFuture::join).map(Reservation::delay).toList();
        // A token a second: each caller's permit is due a second after the one who asked before.
        assertThat(delays).as("due in the order asked").isSortedAccordingTo(Comparator.naturalOrder())
                .doesNotHaveDuplicates();
    }

    /** A figure of a section of the server's {@code INFO}. */
    private long info(String section, String name) {
        return server.cli("INFO", section).lines().filter(line -> line.startsWith(name + ":"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf(':') + 1).trim()))
                .findFirst().orElseThrow();
    }
}
