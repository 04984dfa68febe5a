package dev.sluice.redisson;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.CountSyncStore.Sync;
import dev.sluice.CountSyncStore.WindowCounts;
import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.OnLimit;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.api.RScoredSortedSet;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.api.redisnode.RedisSingle;
import org.redisson.client.codec.StringCodec;
import org.redisson.client.protocol.Time;

/** What the Redis store does beyond the contract: keys, expiry, scripts, server time, round trips. */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedissonRateLimitStoreTest {

    private RedisServer server;
    private RedissonClient client;
    private final MutableClock clock = new MutableClock(Instant.parse("2200-01-01T00:00:30Z"));

    @BeforeAll
    void connect(RedisServer server) {
        this.server = server;
        this.client = RedisClients.connect(server);
    }

    @AfterAll
    void disconnect() {
        client.shutdown();
    }

    @BeforeEach
    void emptyRedis() {
        server.flushAll();
    }

    private RedissonRateLimitStore clientClockStore() {
        return clientClockStore(clock);
    }

    private RedissonRateLimitStore clientClockStore(MutableClock clock) {
        return RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build();
    }

    /**
     * The key expires once its state no longer matters, {@code needed} ms from now, rounded up to
     * the next 1,024 ms; a second is left for the test's own calls. With a client's clock, which
     * Redis's expiry cannot follow, it is kept at least ten minutes.
     */
    private void assertExpiresAfter(String key, long needed) {
        assertThat(client.getKeys().remainTimeToLive(key)).as("TTL of %s", key).isBetween(needed - 1_000, needed + 1_024);
    }

    @Test
    void keepsEveryTierOfAKeyUnderOneHashTagAndEveryKeyExpires() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        List<Tier> tiers = List.of(
                Tier.of(1, ofMinutes(1), FIXED_WINDOW),
                Tier.of(5, ofMinutes(1), SLIDING_WINDOW),
                Tier.of(5, ofSeconds(10), SLIDING_LOG),
                Tier.of(5, ofSeconds(10), TOKEN_BUCKET).withCountRejected());
        store.tryAcquire("otp:10.0.0.1", tiers, 1);
        store.tryAcquire("otp:10.0.0.1", tiers, 1);

        assertThat(client.getKeys().getKeysStream()).containsExactlyInAnyOrder(
                "sluice:{otp:10.0.0.1}:fw60000",
                "sluice:{otp:10.0.0.1}:sw60000",
                "sluice:{otp:10.0.0.1}:sl10000",
                "sluice:{otp:10.0.0.1}:sl10000:log",
                "sluice:{otp:10.0.0.1}:tb10000");
        // Each TTL is what the state still needs on the server's clock: the window's end, the newest
        // entry, the refill, rounded up to the next 1,024 ms.
        long now = serverMillis();
        assertExpiresAfter("sluice:{otp:10.0.0.1}:fw60000",
                server.tierState("sluice:{otp:10.0.0.1}:fw60000", "s") + 60_000 - now);
        assertExpiresAfter("sluice:{otp:10.0.0.1}:sw60000",
                server.tierState("sluice:{otp:10.0.0.1}:sw60000", "s") + 120_000 - now);
        assertExpiresAfter("sluice:{otp:10.0.0.1}:sl10000", 10_000);
        assertExpiresAfter("sluice:{otp:10.0.0.1}:sl10000:log", 10_000);
        assertExpiresAfter("sluice:{otp:10.0.0.1}:tb10000", 4_000);
    }

    /**
     * A client's clock may stand still while Redis counts expiry down in real time: a state the
     * key's time still needs must not be gone when the next call comes, whatever time passed
     * for Redis. Every script keeps what it writes at least ten minutes, down to a state of a
     * millisecond's window whose end is a millisecond before a 1,024 ms step.
     */
    @Test
    void aClientClockThatStandsStillKeepsEveryStateItWritesTenMinutes() {
        MutableClock stillClock = new MutableClock(Instant.ofEpochMilli((clock.millis() / 1_024 + 1) * 1_024 - 2));
        RedissonRateLimitStore store = clientClockStore(stillClock);
        List<Tier> tiers = List.of(
                Tier.of(5, ofSeconds(1), FIXED_WINDOW),
                Tier.of(Tier.MAX_LIMIT_TIMES_WINDOW_MILLIS, Duration.ofMillis(1), SLIDING_WINDOW),
                Tier.of(5, ofSeconds(1), SLIDING_LOG),
                Tier.of(5, ofSeconds(1), TOKEN_BUCKET));
        store.tryAcquire("decided", tiers, 1);
        store.pause("paused", tiers, Duration.ofMillis(1));
        store.sync("synced", tiers.subList(0, 1), new Sync("instance", 1,
                List.of(new WindowCounts(stillClock.millis() / 1_000 * 1_000, 1, 0)))).toCompletableFuture().join();

        List<String> keys = client.getKeys().getKeysStream().toList();
        assertThat(keys).hasSize(5 + 4 + 1);
        for (String key : keys) {
            assertThat(client.getKeys().remainTimeToLive(key)).as("TTL of %s", key)
                    .isGreaterThan(ofMinutes(10).minusSeconds(1).toMillis());
        }
    }

    @Test
    void everyTierOfABlockedKeyLastsAsLongAsTheBlock() {
        RedissonRateLimitStore store = clientClockStore();
        List<Tier> tiers = List.of(
                Tier.of(1, ofMinutes(1), FIXED_WINDOW).withBlockFor(ofMinutes(15)),
                Tier.of(5, ofSeconds(10), TOKEN_BUCKET));
        store.tryAcquire("otp:10.0.0.1", tiers, 1);
        store.tryAcquire("otp:10.0.0.1", tiers, 1);

        assertExpiresAfter("sluice:{otp:10.0.0.1}:fw60000", ofMinutes(15).toMillis());
        assertExpiresAfter("sluice:{otp:10.0.0.1}:tb10000", ofMinutes(15).toMillis());
        clock.advance(ofMinutes(10));
        assertThat(store.tryAcquire("otp:10.0.0.1", List.of(tiers.get(1)), 1).allowed())
                .as("the block holds for a call that brings another tier only").isFalse();
    }

    @Test
    void aBusyKeyMovesItsExpiryAboutOnceASecond() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        List<Tier> bucket = List.of(Tier.of(1_000_000, ofSeconds(1), TOKEN_BUCKET));
        server.cli("CONFIG", "RESETSTAT");

        // Every call moves the bucket's end with the server's clock; Redis hears of it about once a second.
        long start = serverMillis();
        int calls = 0;
        while (serverMillis() - start < 1_100) {
            store.tryAcquire("busy", bucket, 1);
            calls++;
        }

        Map<String, String> stats = client.getRedisNodes(RedisNodes.SINGLE).getInstance()
                .info(RedisNode.InfoSection.COMMANDSTATS);
        long expiries = Long.parseLong(stats.get("cmdstat_pexpireat").replaceAll("^calls=(\\d+),.*", "$1"));
        assertThat(calls).as("decisions in 1.1 s").isGreaterThan(10);
        assertThat(expiries).as("PEXPIREAT calls in %d decisions over 1.1 s", calls).isBetween(1L, 3L);
    }

    @Test
    void aLogMadeAgainAfterItsEntriesLeftExpiresWithItsState() {
        // Both calls' ends fall within one 1,024 ms step, so the state's expiry stays where it is.
        MutableClock stepClock = new MutableClock(Instant.ofEpochMilli((clock.millis() / 1_024 + 1) * 1_024));
        RedissonRateLimitStore store = clientClockStore(stepClock);
        List<Tier> log = List.of(Tier.of(2, Duration.ofMillis(500), SLIDING_LOG));
        store.tryAcquire("k", log, 1);
        stepClock.advance(Duration.ofMillis(510));

        // The entry has left the window: Redis deletes the emptied log, and this call makes it again.
        store.tryAcquire("k", log, 1);

        assertThat(client.getKeys().remainTimeToLive("sluice:{k}:sl500:log")).as("TTL of the log, in ms").isPositive();
    }

    @Test
    void hashesKeysThatAreLongOrHoldBraces() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock).keyPrefix("app1")
                .timeout(RedisClients.PATIENT).build();
        Tier tier = Tier.of(1, ofMinutes(1), FIXED_WINDOW);
        String longKey = "user:" + "x".repeat(200);
        store.tryAcquire(longKey, List.of(tier), 1);
        store.tryAcquire("a{b}c", List.of(tier), 1);
        store.tryAcquire("#raw", List.of(tier), 1);

        assertThat(client.getKeys().getKeysStreamByPattern("*:fw60000")).containsExactlyInAnyOrder(
                "app1:{" + RedissonRateLimitStore.hashTag(longKey) + "}:fw60000",
                "app1:{" + RedissonRateLimitStore.hashTag("a{b}c") + "}:fw60000",
                "app1:{" + RedissonRateLimitStore.hashTag("#raw") + "}:fw60000");
        assertThat(RedissonRateLimitStore.hashTag("a{b}c")).matches("#[0-9a-f]{64}");
        assertThat(RedissonRateLimitStore.hashTag("#raw")).isNotEqualTo("#raw").startsWith("#");
    }

    @Test
    void namesNoKeyWhenRedisFails() {
        RedissonRateLimitStore store = clientClockStore();
        server.cli("SET", "sluice:{otp:+447700900123}:fw60000", "not a hash");

        assertThatThrownBy(() -> store.tryAcquire("otp:+447700900123", List.of(Tier.of(3, ofMinutes(1), FIXED_WINDOW)), 1))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageStartingWith("Redis failed: RedisException: WRONGTYPE")
                .satisfies(failure -> {
                    for (Throwable t = failure; t != null; t = t.getCause()) {
                        assertThat(t.getMessage()).doesNotContain("+447700900123");
                    }
                });
    }

    @Test
    void recoversFromAFlushedScriptCacheWithoutTheCallerNoticing() {
        RedissonRateLimitStore store = clientClockStore();
        Tier tier = Tier.of(3, ofMinutes(1), FIXED_WINDOW);
        assertThat(store.tryAcquire("k", List.of(tier), 1).allowed()).isTrue();

        server.cli("SCRIPT", "FLUSH");
        assertThat(store.tryAcquire("k", List.of(tier), 1).remaining()).isEqualTo(1);

        server.cli("SCRIPT", "FLUSH");
        assertThat(store.tryAcquireAsync("k", List.of(tier), 1).toCompletableFuture().join().remaining()).isZero();
        assertThat(server.cli("SCRIPT", "EXISTS", RedissonRateLimitStore.SCRIPT_SHA)).isEqualTo("1");
    }

    @Test
    void recoversFromFlushedScriptsOnEveryMasterOfACluster(RedisCluster cluster) {
        RedissonClient clusterClient = RedisClients.connect(cluster);
        try {
            RedissonRateLimitStore store = RedissonRateLimitStore.builder(clusterClient).clock(clock)
                    .timeout(RedisClients.PATIENT).build();
            Tier tier = Tier.of(2, ofMinutes(1), FIXED_WINDOW);
            for (int i = 0; i < 20; i++) {
                store.tryAcquire("k" + i, List.of(tier), 1);
            }
            cluster.masters().forEach(master -> master.cli("SCRIPT", "FLUSH"));
            assertThat(store.tryAcquire("", List.of(tier), 1).allowed()).as("an empty key has a hash tag too").isTrue();

            for (int i = 0; i < 20; i++) {
                assertThat(store.tryAcquire("k" + i, List.of(tier), 1).remaining()).isZero();
                assertThat(store.tryAcquireAsync("k" + i, List.of(tier), 1).toCompletableFuture().join().allowed())
                        .isFalse();
            }
        } finally {
            clusterClient.shutdown();
        }
    }

    @Test
    void completesAsynchronousDecisionsOffRedissonsThreads() {
        ExecutorService callers = Executors.newSingleThreadExecutor(task -> new Thread(task, "callers"));
        CountDownLatch callersBusy = new CountDownLatch(1);
        try {
            // Holding the executor's only thread keeps the decision pending until the dependent stage is
            // attached; otherwise the stage could run at once on the test's own thread.
            callers.execute(() -> awaitQuietly(callersBusy));
            RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock).completionExecutor(callers)
                    .timeout(RedisClients.PATIENT).build();
            CompletableFuture<String> thread = store
                    .tryAcquireAsync("k", List.of(Tier.of(1, ofMinutes(1), FIXED_WINDOW)), 1)
                    .thenApply(decision -> Thread.currentThread().getName()).toCompletableFuture();
            callersBusy.countDown();
            assertThat(thread.join()).isEqualTo("callers");
        } finally {
            callers.shutdown();
        }
    }

    @Test
    void completesAsynchronousDecisionsOnItsOwnNamedDaemonThreadsByDefault() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT).build();
        // A stage attached after Redis answered runs on this thread: ask again then.
        Thread completing = Thread.currentThread();
        for (int attempt = 0; completing == Thread.currentThread() && attempt < 10; attempt++) {
            completing = store.tryAcquireAsync("k" + attempt, List.of(Tier.of(1, ofMinutes(1), FIXED_WINDOW)), 1)
                    .thenApply(decision -> Thread.currentThread()).toCompletableFuture().join();
        }

        assertThat(completing.getName()).startsWith("sluice-redis-");
        assertThat(completing.isDaemon()).isTrue();
    }

    @Test
    void theThreadThatWarmsTheStoreUpEndsOnceItIsWarm() throws InterruptedException {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        store.warmUp().toCompletableFuture().join();

        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getName().equals("sluice-redis-connect")) {
                thread.join(Duration.ofSeconds(5).toMillis());
                assertThat(thread.isAlive()).as("a connect thread, 5 s after the warm-up").isFalse();
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aDecisionIsOneCommandOnTheServer() {
        RedissonRateLimitStore store = clientClockStore();
        List<Tier> tiers = List.of(Tier.of(100, ofMinutes(1), FIXED_WINDOW), Tier.of(100, ofMinutes(1), SLIDING_LOG),
                Tier.of(100, ofMinutes(1), SLIDING_WINDOW), Tier.of(100, ofMinutes(1), TOKEN_BUCKET));
        store.tryAcquire("warm-up", tiers, 1);
        server.cli("CONFIG", "RESETSTAT");

        for (int i = 0; i < 25; i++) {
            store.tryAcquire("k", tiers, 1);
            store.tryAcquireAsync("k", tiers, 1).toCompletableFuture().join();
        }

        RedisSingle redis = client.getRedisNodes(RedisNodes.SINGLE);
        Map<String, String> stats = redis.getInstance().info(RedisNode.InfoSection.COMMANDSTATS);
        assertThat(stats).containsKey("cmdstat_evalsha");
        assertThat(stats.get("cmdstat_evalsha")).startsWith("calls=50,");
        // Commands the script runs are counted too; apart from them the client sent nothing.
        Set<String> insideTheScript = Set.of("get", "set", "del", "hget", "hmget", "hset", "pexpireat", "exists",
                "zadd", "zcard", "zrange", "zrangebyscore", "zremrangebyscore", "zpopmin", "time", "pttl");
        assertThat(stats.keySet()).allMatch(command -> command.equals("cmdstat_evalsha")
                || command.startsWith("cmdstat_config") || command.equals("cmdstat_ping")
                || insideTheScript.contains(command.substring("cmdstat_".length())), "sent only by the script");
    }

    @Test
    void callersWaitingForATokenBucketAskRedisOncePerPermit() throws Exception {
        AtomicInteger storeCalls = new AtomicInteger();
        RateLimitStore store = new ForwardingRateLimitStore(
                RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build()) {
            @Override
            public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
                storeCalls.incrementAndGet();
                return super.reserve(key, tiers, cost, maxWait);
            }

            @Override
            public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
                storeCalls.incrementAndGet();
                return super.reserveAsync(key, tiers, cost, maxWait);
            }

            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                storeCalls.incrementAndGet();
                return super.tryAcquire(key, tiers, cost);
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                storeCalls.incrementAndGet();
                return super.tryAcquireAsync(key, tiers, cost);
            }
        };
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(store)
                .tier(Tier.of(20, ofSeconds(1), TOKEN_BUCKET)).onLimit(OnLimit.WAIT).maxWait(ofSeconds(30)).build();
        for (int i = 0; i < 20; i++) {
            limiter.acquire("api");
        }
        server.cli("CONFIG", "RESETSTAT");
        storeCalls.set(0);

        // 40 permits at one per 50 ms: about 2 s, half of the callers blocking, half not.
        ExecutorService threads = Executors.newFixedThreadPool(20);
        try {
            List<CompletableFuture<Decision>> calls = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                calls.add(CompletableFuture.supplyAsync(() -> limiter.acquire("api"), threads));
                calls.add(limiter.acquireAsync("api").toCompletableFuture());
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
            assertThat(calls).allSatisfy(call -> assertThat(call.join().allowed()).isTrue());
        } finally {
            threads.shutdownNow();
        }
        assertThat(storeCalls).as("decisions asked of the store for 40 permits").hasValue(40);
        Map<String, String> stats = client.getRedisNodes(RedisNodes.SINGLE).getInstance()
                .info(RedisNode.InfoSection.COMMANDSTATS);
        long scriptCalls = Long.parseLong(stats.get("cmdstat_evalsha").replaceAll("^calls=(\\d+),.*", "$1"));
        assertThat(scriptCalls).as("script calls for them, some deciding several").isBetween(1L, 40L);
    }

    @Test
    void readsTheServersTimeByDefault() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        Tier perDay = Tier.of(1, Duration.ofDays(1), FIXED_WINDOW);
        long before = serverMillis();
        store.tryAcquire("k", List.of(perDay), 1);
        Decision rejected = store.tryAcquire("k", List.of(perDay), 1);
        long after = serverMillis();

        // The window is the server's UTC day, and the key lives until it ends (rounded up to 1,024 ms).
        long dayEnd = (after / 86_400_000L + 1) * 86_400_000L;
        assertThat(rejected.retryAfter().toMillis()).isBetween(dayEnd - after, dayEnd - before);
        assertThat(client.getKeys().remainTimeToLive("sluice:{k}:fw86400000"))
                .isBetween(dayEnd - after - 1_000, dayEnd - before + 1_024);
    }

    @Test
    void timesLogEntriesWithTheServersClockOnePerCallWhateverItsCost() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        long before = serverMillis();
        store.tryAcquire("k", List.of(Tier.of(5, ofMinutes(1), SLIDING_LOG)), 2);
        long after = serverMillis();

        RScoredSortedSet<String> log = client.getScoredSortedSet("sluice:{k}:sl60000:log", StringCodec.INSTANCE);
        assertThat(log.size()).isEqualTo(1);
        assertThat(log.first()).endsWith(":2");
        assertThat(log.firstScore().longValue()).isBetween(before, after);
    }

    @Test
    void aSlidingLogCallOfAMillionPermitsKeepsRedisAnswering() {
        RedissonRateLimitStore store = clientClockStore();
        List<Tier> million = List.of(Tier.of(1_000_000, ofMinutes(1), SLIDING_LOG));
        CompletableFuture<Void> calls = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < 3; i++) {
                assertThat(store.tryAcquire("k", million, 1_000_000).allowed()).isTrue();
                clock.advance(ofMinutes(1));
            }
        });
        Duration slowestPing = Duration.ZERO;
        while (!calls.isDone()) {
            long start = System.nanoTime();
            server.cli("PING");
            slowestPing = max(slowestPing, Duration.ofNanos(System.nanoTime() - start));
        }

        calls.join();
        assertThat(slowestPing).as("the slowest PING meanwhile").isLessThan(ofSeconds(1));
        assertThat(client.getScoredSortedSet("sluice:{k}:sl60000:log", StringCodec.INSTANCE).size()).isEqualTo(1);
        assertThat(Long.parseLong(server.cli("MEMORY", "USAGE", "sluice:{k}:sl60000:log"))).as("bytes").isLessThan(1_000);
    }

    @Test
    void givesBackACallAdmittedAgoBeforeTheServersTime() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        List<Tier> tiers = List.of(Tier.of(3, Duration.ofDays(1), FIXED_WINDOW), Tier.of(3, Duration.ofDays(1), SLIDING_WINDOW),
                Tier.of(3, Duration.ofDays(1), SLIDING_LOG), Tier.of(3, Duration.ofDays(1), TOKEN_BUCKET));
        assertThat(store.tryAcquire("k", tiers, 2).allowed()).isTrue();
        assertThat(store.tryAcquire("k", tiers, 1).allowed()).isTrue();

        // The log has no call of 2 admitted a minute before the server's now: nothing comes back.
        store.giveBack("k", tiers, 2, ofMinutes(1));
        assertThat(store.tryAcquire("k", tiers, 1).allowed()).isFalse();
        store.giveBack("k", tiers, 2, Duration.ZERO);
        assertThat(store.tryAcquire("k", tiers, 2).allowed()).as("given back in every tier").isTrue();
        assertThat(store.tryAcquire("k", tiers, 1).allowed()).isFalse();
        for (String key : client.getKeys().getKeys()) {
            assertThat(client.getKeys().remainTimeToLive(key)).as("TTL of %s", key).isPositive();
        }
    }

    @Test
    void aPauseGivesEveryTierAStateThatLivesUntilThePauseEnds() {
        MutableClock clock = new MutableClock(this.clock.instant());
        RedissonRateLimitStore store = clientClockStore(clock);
        List<Tier> tiers = List.of(
                Tier.of(1, ofMinutes(1), FIXED_WINDOW),
                Tier.of(5, ofSeconds(10), SLIDING_LOG),
                Tier.of(5, ofSeconds(10), TOKEN_BUCKET));
        store.tryAcquire("partner", List.of(tiers.get(0)), 1);

        store.pause("partner", tiers, ofMinutes(15));
        assertThat(client.getKeys().getKeysStream()).containsExactlyInAnyOrder(
                "sluice:{partner}:fw60000", "sluice:{partner}:sl10000", "sluice:{partner}:tb10000");
        for (String key : client.getKeys().getKeys()) {
            assertExpiresAfter(key, ofMinutes(15).toMillis());
        }
        clock.advance(ofMinutes(15));
        assertThat(store.tryAcquire("partner", List.of(tiers.get(0)), 1).allowed()).as("a new window").isTrue();
        assertThat(store.tryAcquire("partner", tiers.subList(1, 3), 5).allowed()).as("fresh tiers").isTrue();
    }

    @Test
    void aShorterPauseKeepsALongerExpiry() {
        MutableClock clock = new MutableClock(this.clock.instant());
        RedissonRateLimitStore store = clientClockStore(clock);
        List<Tier> perDay = List.of(Tier.of(1, Duration.ofDays(1), FIXED_WINDOW));
        clock.alignTo(Duration.ofDays(1));
        store.tryAcquire("partner", perDay, 1);

        store.pause("partner", perDay, ofMinutes(1));
        assertExpiresAfter("sluice:{partner}:fw86400000", Duration.ofDays(1).toMillis());
    }

    @Test
    void pausesUntilTheServersTimePlusThePauseByDefault() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        List<Tier> tiers = List.of(Tier.of(5, ofMinutes(1), SLIDING_WINDOW));
        long before = serverMillis();
        store.pause("partner", tiers, ofHours(1));
        Decision rejected = store.tryAcquire("partner", tiers, 1);
        long after = serverMillis();

        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfter().toMillis()).isBetween(ofHours(1).toMillis() - (after - before),
                ofHours(1).toMillis());
        assertExpiresAfter("sluice:{partner}:sw60000", ofHours(1).toMillis());
    }

    @Test
    void recountsACallAtTheServersTime() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        List<Tier> tiers = List.of(Tier.of(3, ofMinutes(1), SLIDING_LOG), Tier.of(3, ofMinutes(1), FIXED_WINDOW));
        assertThat(store.tryAcquire("partner", tiers, 2).allowed()).isTrue();
        RScoredSortedSet<String> log = client.getScoredSortedSet("sluice:{partner}:sl60000:log", StringCodec.INSTANCE);
        long admitted = log.firstScore().longValue();
        long before = serverMillis();
        while (before <= admitted) {
            before = serverMillis();
        }

        store.recount("partner", tiers, 2, Duration.ZERO);
        long after = serverMillis();
        assertThat(log.size()).isEqualTo(1);
        assertThat(log.firstScore().longValue()).as("the entry's new time").isBetween(before, after);
        assertThat(store.tryAcquire("partner", tiers, 2).allowed()).as("the fixed window counted 2").isFalse();
    }

    /**
     * A pause keeps a log's hash past the log's entries; a call recounted then keeps the log as
     * long as its hash, which outlives the entry.
     */
    @Test
    void aRecountedLogLivesUntilItsEntryLeavesAfterAPause() {
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
        List<Tier> log = List.of(Tier.of(3, ofSeconds(10), SLIDING_LOG));
        assertThat(store.tryAcquire("partner", log, 1).allowed()).isTrue();
        long admitted = client.getScoredSortedSet("sluice:{partner}:sl10000:log", StringCodec.INSTANCE).firstScore()
                .longValue();
        store.pause("partner", log, ofMinutes(10));
        assertExpiresAfter("sluice:{partner}:sl10000:log", 10_000);
        // A recount moves the entry to a later millisecond of the server's clock.
        while (serverMillis() <= admitted) {
            Thread.onSpinWait();
        }

        store.recount("partner", log, 1, Duration.ZERO);
        assertExpiresAfter("sluice:{partner}:sl10000", ofMinutes(10).toMillis());
        assertExpiresAfter("sluice:{partner}:sl10000:log", ofMinutes(10).toMillis());
    }

    /** The call, then {@code newer} calls a millisecond later: the call is given back if it is among the 1,024 newest. */
    @ParameterizedTest
    @ValueSource(ints = {1_023, 1_024})
    void aSlidingLogLooksForTheCallAmongItsNewest1024Calls(int newer) {
        RedissonRateLimitStore store = clientClockStore();
        List<Tier> log = List.of(Tier.of(2_000, ofMinutes(1), SLIDING_LOG));
        assertThat(store.tryAcquire("k", log, 2).allowed()).isTrue();
        clock.advanceMillis(1);
        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        for (int i = 0; i < newer; i++) {
            calls.add(store.tryAcquireAsync("k", log, 1).toCompletableFuture());
        }
        assertThat(calls).allSatisfy(call -> assertThat(call.join().allowed()).isTrue());

        store.giveBack("k", log, 2, Duration.ofMillis(1));
        long left = store.tryAcquire("k", log, 1).remaining();
        assertThat(left).isEqualTo(newer < 1_024 ? 2_000 - newer - 1 : 2_000 - newer - 2 - 1);
    }

    @Test
    void idsSortAsTheNumbersOfTheirCalls() {
        List<Long> numbers = List.of(1L, 9L, 10L, 35L, 36L, 1_295L, 1_296L, 99_999L, Long.MAX_VALUE);
        List<String> ids = numbers.stream().map(RedissonRateLimitStore::sequenceText).toList();
        assertThat(ids).isSorted().doesNotHaveDuplicates();
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private long serverMillis() {
        Time time = client.getRedisNodes(RedisNodes.SINGLE).getInstance().time();
        return time.getSeconds() * 1_000L + time.getMicroseconds() / 1_000;
    }
}
