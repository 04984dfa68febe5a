package dev.sluice.redisson;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static java.time.Duration.ofDays;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.Decision;
import dev.sluice.OverloadPolicy;
import dev.sluice.RateLimiter;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreOverloadedException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.redisson.RedissonRateLimitStore.Call;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import dev.sluice.tck.RateAlgorithms;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * What the Redis store does when Redis fails it, one call at a time, against a
 * {@code redis-server} of this test's own that it pauses, kills and restarts. The client waits 5 s
 * and retries twice, as an application's own client might; the store must not inherit either.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class RedissonRateLimitStoreOutageTest {

    /**
     * A day's window, which a test's seconds of real time cross once in about 20,000 runs: a
     * window ending mid-test would start its count again and look like a lost call.
     */
    private static final List<Tier> TIERS = List.of(Tier.of(100, ofDays(1), FIXED_WINDOW));

    private RedisServer server;
    private RedissonClient client;

    @BeforeEach
    void start() {
        server = RedisServer.start();
        client = RedisClients.connect(server);
    }

    @AfterEach
    void stop() {
        RedisClients.shutDown(client);
        server.close();
    }

    private long stored(String key) {
        return server.tierState("sluice:{" + key + "}:fw86400000", "n");
    }

    private long scriptCalls() {
        return server.cli("INFO", "commandstats").lines().filter(line -> line.startsWith("cmdstat_evalsha:"))
                .map(line -> line.replaceAll("^cmdstat_evalsha:calls=(\\d+),.*", "$1")).mapToLong(Long::parseLong).sum();
    }

    /** Pauses Redis's writers for {@code pause}, and waits until what it held back has run. */
    private void pauseWhile(Duration pause, Runnable calls) {
        server.cli("CLIENT", "PAUSE", String.valueOf(pause.toMillis()), "WRITE");
        try {
            calls.run();
        } finally {
            server.cli("CLIENT", "UNPAUSE");
        }
    }

    private static Duration timed(Runnable action) {
        long start = System.nanoTime();
        action.run();
        return Duration.ofNanos(System.nanoTime() - start);
    }

    @Test
    void aDecisionWithoutAnAnswerWithinTheTimeoutFailsOnceWhateverTheClientsOwnTimeoutAndRetries() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(ofMillis(200)).build();
        store.tryAcquire("k", TIERS, 1);
        long before = scriptCalls();

        pauseWhile(ofSeconds(5), () -> {
            Duration sync = timed(() -> assertThatThrownBy(() -> store.tryAcquire("k", TIERS, 1))
                    .isInstanceOf(StoreUnavailableException.class)
                    .hasMessage("Redis did not answer within 200 ms"));
            CompletableFuture<Decision> pending = store.tryAcquireAsync("k", TIERS, 1).toCompletableFuture();
            Duration async = timed(() -> assertThatThrownBy(pending::join)
                    .hasCauseInstanceOf(StoreUnavailableException.class));
            assertThat(sync).isLessThan(ofSeconds(2));
            assertThat(async).isLessThan(ofSeconds(2));
        });

        RedisCluster.await("the held-back calls to run", () -> scriptCalls() - before == 2);
        assertThat(scriptCalls() - before).as("script calls: each decision sent once").isEqualTo(2);
    }

    @Test
    void aGiveBackWithoutAnAnswerWithinTheTimeoutFailsOnceAsADecisionDoes() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(ofMillis(200)).build();
        assertThat(store.tryAcquire("k", TIERS, 3).allowed()).isTrue();

        pauseWhile(ofSeconds(5), () -> {
            Duration sync = timed(() -> assertThatThrownBy(() -> store.giveBack("k", TIERS, 1, Duration.ZERO))
                    .isInstanceOf(StoreUnavailableException.class)
                    .hasMessage("Redis did not answer within 200 ms"));
            CompletableFuture<Void> pending = store.giveBackAsync("k", TIERS, 1, Duration.ZERO).toCompletableFuture();
            Duration async = timed(() -> assertThatThrownBy(pending::join)
                    .hasCauseInstanceOf(StoreUnavailableException.class));
            assertThat(sync).isLessThan(ofSeconds(2));
            assertThat(async).isLessThan(ofSeconds(2));
        });

        // Held back, not lost: each ran once when Redis went on.
        RedisCluster.await("the held-back give-backs to run", () -> stored("k") == 1);
        assertThat(stored("k")).isEqualTo(1);
    }

    @Test
    void aCallDecidedInThisJvmWhenTheQueueWasFullIsGivenBackHereAndNeverToRedis() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT)
                .maxQueued(1).onOverload(OverloadPolicy.LOCAL_FALLBACK).build();
        assertThat(store.tryAcquire("k", TIERS, 3).allowed()).isTrue();
        List<CompletableFuture<Decision>> sent = new ArrayList<>();
        long[] decidedHere = new long[1];

        pauseWhile(ofSeconds(10), () -> {
            // Two script calls in flight and one decision queued: the next is decided in this JVM.
            for (int i = 0; i < 3; i++) {
                sent.add(store.tryAcquireAsync("k", TIERS, 1).toCompletableFuture());
            }
            assertThat(store.tryAcquire("k", TIERS, 1).allowed()).as("decided in this JVM").isTrue();
            decidedHere[0] = System.nanoTime();
        });
        assertThat(sent).allSatisfy(decision -> assertThat(decision.join().allowed()).isTrue());

        store.giveBack("k", TIERS, 1, Duration.ofNanos(System.nanoTime() - decidedHere[0]));
        assertThat(stored("k")).as("permits Redis holds: its own six calls").isEqualTo(6);
    }

    @Test
    void aGiveBackToAStoppedServerFailsWithinTheTimeoutAndThroughTheBreaker() {
        MutableClock breakerClock = new MutableClock(Instant.parse("2200-01-01T00:00:00Z"));
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(3).clock(breakerClock).build();
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(ofMillis(200))
                .circuitBreaker(breaker).build();
        assertThat(store.tryAcquire("k", TIERS, 3).allowed()).isTrue();
        server.kill();

        for (int i = 0; i < 3; i++) {
            Duration failed = timed(() -> assertThatThrownBy(() -> store.giveBack("k", TIERS, 1, Duration.ZERO))
                    .isInstanceOf(StoreUnavailableException.class));
            assertThat(failed).isLessThan(ofSeconds(2));
        }
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.OPEN);
        Duration refused = timed(() -> assertThatThrownBy(() -> store.giveBack("k", TIERS, 1, Duration.ZERO))
                .isInstanceOf(StoreUnavailableException.class));
        assertThat(refused).as("refused by the open breaker").isLessThan(ofMillis(100));
    }

    @Test
    void aCallThatReachesRedisAfterItsCallerGaveUpIsNotCounted() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(ofMillis(200)).build();
        assertThat(store.tryAcquire("k", TIERS, 1).allowed()).isTrue();
        long before = scriptCalls();

        // Paused until the calls are done, at most 10 s: far longer than three calls' timeouts with
        // every grace period a saturated machine gets (9 x 200 ms each).
        AtomicInteger sent = new AtomicInteger();
        pauseWhile(ofSeconds(10), () -> {
            for (int i = 0; i < 3; i++) {
                Throwable refused = catchThrowable(() -> store.tryAcquire("k", TIERS, 1));
                // Sent and given up on; or, behind the two calls in flight on a loaded machine,
                // refused before it was sent.
                assertThat(refused).isInstanceOfAny(StoreUnavailableException.class, StoreOverloadedException.class);
                if (refused instanceof StoreUnavailableException) {
                    sent.incrementAndGet();
                }
            }
        });

        assertThat(sent).as("calls sent").hasPositiveValue();
        RedisCluster.await("the held-back calls to run", () -> scriptCalls() - before == sent.get());
        assertThat(stored("k")).as("calls counted: only the one its caller heard of").isEqualTo(1);
    }

    @Test
    void theScriptRefusesACallPastItsDeadlineAndCountsNothing() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).build();
        Call late = store.call("k", TIERS, 1, 0);
        long serverNow = server.time().toEpochMilli();

        byte[] reply = DecideScript.run(client, List.of(late), serverNow - 1).get(0);

        assertThat(DecisionCodec.figure(reply, 0)).isEqualTo(-1);
        assertThat(DecisionCodec.figure(reply, 1)).as("the server's time").isBetween(serverNow, serverNow + 10_000);
        assertThat(stored("k")).isZero();
    }

    @ParameterizedTest
    @RateAlgorithms
    void aCallHoldsNoPooledBufferThatAFailedBatchWouldLeak(Algorithm algorithm) throws Exception {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).build();
        Call call = store.call("k", List.of(Tier.of(5, ofMinutes(1), algorithm)), 1, 0);

        for (Object argument : call.arguments()) {
            ByteBuf encoded = DecisionCodec.INSTANCE.getValueEncoder().encode(argument);
            assertThat(encoded.alloc()).as("not pooled: nothing to give back should its batch fail")
                    .isInstanceOf(UnpooledByteBufAllocator.class);
        }
    }

    @Test
    void aDecisionWhoseAnswerCameAfterItsCallerGaveUpIsTakenBack() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(ofMillis(50)).build();
        List<Tier> log = List.of(Tier.of(1_000, ofMinutes(1), Algorithm.SLIDING_LOG));
        eventually(() -> store.tryAcquire("warm-up", log, 1));
        // 300,000 expired calls: the decision clears them first, which takes several times 50 ms.
        server.cli("EVAL", "for i = 1, 300000 do redis.call('ZADD', KEYS[1], 0, 'old' .. i .. ':1') end", "1",
                "sluice:{k}:sl60000:log");

        assertThatThrownBy(() -> store.tryAcquire("k", log, 1)).isInstanceOf(StoreUnavailableException.class)
                .hasMessage("Redis did not answer within 50 ms");

        RedisCluster.await("the decision to be taken back",
                () -> server.cli("ZCARD", "sluice:{k}:sl60000:log").equals("0"));
        assertThat(server.cli("INFO", "commandstats")).as("the decision ran, admitting the call, then was taken back")
                .contains("cmdstat_eval:calls=2,");
    }

    @ParameterizedTest
    @RateAlgorithms
    void aDecisionItsCallerNeverReceivedIsTakenBack(Algorithm algorithm) {
        MutableClock clock = new MutableClock(Instant.parse("2200-01-01T00:00:30Z"));
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT).build();
        List<Tier> tiers = List.of(Tier.of(5, ofMinutes(1), algorithm));
        assertThat(store.tryAcquire("k", tiers, 2).allowed()).isTrue();

        Call unreceived = store.call("k", tiers, 3, 0);
        byte[] reply = DecideScript.run(client, unreceived);
        assertThat(DecisionCodec.figure(reply, 0)).as("admitted").isEqualTo(1);
        store.takeBack(unreceived, reply).join();

        assertThat(store.tryAcquire("k", tiers, 3).allowed()).as("the 3 permits are back").isTrue();
        assertThat(store.tryAcquire("k", tiers, 1).allowed()).as("and no more").isFalse();
    }

    @Test
    void aTokenBucketGetsBackOnlyWhatWasNotRefilledSince() {
        MutableClock clock = new MutableClock(Instant.parse("2200-01-01T00:00:00Z"));
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT).build();
        List<Tier> bucket = List.of(Tier.of(5, ofMinutes(1), Algorithm.TOKEN_BUCKET));
        Call unreceived = store.call("k", bucket, 2, 0);
        byte[] reply = DecideScript.run(client, unreceived);
        // Half a token refills in 6 s; the call after it would have found the bucket full all the same.
        clock.advance(ofSeconds(6));
        assertThat(store.tryAcquire("k", bucket, 1).allowed()).isTrue();

        store.takeBack(unreceived, reply).join();

        assertThat(store.tryAcquire("k", bucket, 4).allowed()).as("as if only the second call had come").isTrue();
        assertThat(store.tryAcquire("k", bucket, 1).allowed()).isFalse();
    }

    @Test
    void aRestartedServerIsUsedAgainWithinSecondsAndItsMissingScriptLoaded() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).build();
        assertThat(eventually(() -> store.tryAcquire("k", TIERS, 1)).allowed()).isTrue();

        server.restart();

        // A restarted server knows no scripts and, keeping nothing on disk, no counts.
        Decision decision = eventually(() -> store.tryAcquire("k", TIERS, 2));
        assertThat(decision.remaining()).isEqualTo(98);
    }

    @Test
    void aBreakerThatWouldProbeBeforeTheStoresTimeoutIsRefusedAndTheDefaultOneOpensForTheTimeout() {
        StoreCircuitBreaker shortBreaker = StoreCircuitBreaker.builder().openDuration(ofSeconds(1)).build();
        assertThatThrownBy(() -> RedissonRateLimitStore.builder(client).timeout(ofSeconds(2))
                .circuitBreaker(shortBreaker).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("The circuit breaker's openDuration (1000 ms) is shorter than the"
                        + " RedissonRateLimitStore timeout (2000 ms)");

        assertThat(RedissonRateLimitStore.builder(client).timeout(ofSeconds(2)).build().circuitBreaker())
                .hasValueSatisfying(breaker -> assertThat(breaker.openDuration()).isEqualTo(ofSeconds(2)));
        assertThat(RedissonRateLimitStore.builder(client).build().circuitBreaker())
                .hasValueSatisfying(breaker -> assertThat(breaker.openDuration()).isEqualTo(ofMillis(500)));
    }

    @Test
    void anOpenBreakerAnswersAtOnceWithoutAskingRedisThenOneProbeClosesIt() {
        MutableClock breakerClock = new MutableClock(Instant.parse("2200-01-01T00:00:00Z"));
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(3).clock(breakerClock).build();
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).circuitBreaker(breaker).build();
        assertThat(store.circuitBreaker()).contains(breaker);
        eventually(() -> store.tryAcquire("k", TIERS, 1));

        server.kill();
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> store.tryAcquire("k", TIERS, 1)).isInstanceOf(StoreUnavailableException.class);
        }
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.OPEN);
        server.restart();
        assertThatThrownBy(() -> store.tryAcquire("k", TIERS, 1))
                .as("Redis is back, but the breaker has not let a probe through yet")
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageStartingWith("Rate limit store is not asked while it fails")
                .satisfies(e -> assertThat(((StoreUnavailableException) e).retryAfter()).isEqualTo(ofMillis(500)));
        assertThat(scriptCalls()).as("calls sent to the restarted server").isZero();

        Decision probe = eventually(() -> {
            breakerClock.advance(ofSeconds(1));
            return store.tryAcquire("k", TIERS, 1);
        });
        assertThat(probe.allowed()).isTrue();
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.CLOSED);
    }

    @Test
    void failuresNeverNameTheKey() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).build();
        eventually(() -> store.tryAcquire("+447700900123", TIERS, 1));
        server.kill();

        assertThatThrownBy(() -> store.tryAcquire("+447700900123", TIERS, 1))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageNotContaining("447700900123")
                .hasNoCause();
    }

    @Test
    void anExecutorThatRefusesWorkLosesNoDecision() throws Exception {
        ExecutorService shutDown = Executors.newSingleThreadExecutor();
        shutDown.shutdown();
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).completionExecutor(shutDown)
                .timeout(RedisClients.PATIENT).build();
        RateLimiter limiter = RateLimiter.builder().name("refused").store(store).tier(TIERS.get(0))
                .onStoreFailure(FailurePolicy.FAIL_CLOSED).build();

        assertThat(store.tryAcquireAsync("k", TIERS, 1).toCompletableFuture().get(10, TimeUnit.SECONDS).allowed())
                .isTrue();
        assertThat(limiter.acquireAsync("k").toCompletableFuture().get(10, TimeUnit.SECONDS).allowed()).isTrue();
    }

    @Test
    void aLazilyConnectingClientBlocksNoCallerWhileRedisIsDownAndConnectsWhenItIsUp() {
        server.kill();
        Config config = RedissonClientConfigs.singleServer(server.address());
        config.setLazyInitialization(true);
        RedissonClient lazy = Redisson.create(config);
        try {
            RedissonRateLimitStore store = RedissonRateLimitStore.builder(lazy).build();
            for (int i = 0; i < 10; i++) {
                Duration call = timed(() -> assertThatThrownBy(() -> store.tryAcquire("k", TIERS, 1))
                        .isInstanceOf(StoreUnavailableException.class));
                assertThat(call).isLessThan(ofSeconds(1));
            }
            assertThatThrownBy(() -> store.warmUp().toCompletableFuture().get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(StoreUnavailableException.class);

            server.restart();
            store.warmUp().toCompletableFuture().join();
            assertThat(server.cli("SCRIPT", "EXISTS", RedissonRateLimitStore.SCRIPT_SHA)).isEqualTo("1");
            assertThat(eventually(() -> store.tryAcquire("k", TIERS, 1)).allowed()).isTrue();
        } finally {
            RedisClients.shutDown(lazy);
        }
    }

    /** Tries until the store decides, for up to 20 seconds. */
    private static Decision eventually(Supplier<Decision> call) {
        long deadline = System.nanoTime() + ofSeconds(20).toNanos();
        while (true) {
            try {
                return call.get();
            } catch (StoreUnavailableException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                RedisServer.waitBriefly();
            }
        }
    }
}
