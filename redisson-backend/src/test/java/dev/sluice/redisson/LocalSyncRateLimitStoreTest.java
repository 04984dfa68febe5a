package dev.sluice.redisson;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.CountSyncStore.Sync;
import dev.sluice.CountSyncStore.Totals;
import dev.sluice.CountSyncStore.WindowCounts;
import dev.sluice.Decision;
import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.api.RedissonClient;

/**
 * Local counting synced with Redis, against a {@code redis-server} of this test's own: the
 * overshoot of three instances on one hot key against the stated bound, one sync per key and
 * interval, and deciding on while Redis is paused without counting anything twice.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class LocalSyncRateLimitStoreTest {

    private static final Duration INTERVAL = ofSeconds(1);

    private RedisServer server;
    private final List<RedissonClient> clients = new ArrayList<>();
    private final List<LocalSyncRateLimitStore> instances = new ArrayList<>();
    private final MutableClock clock = new MutableClock(Instant.parse("2100-01-01T00:00:00Z"));
    private final String key = "local:" + UUID.randomUUID();

    @BeforeEach
    void start() {
        server = RedisServer.start();
    }

    @AfterEach
    void stop() {
        instances.forEach(LocalSyncRateLimitStore::close);
        clients.forEach(RedisClients::shutDown);
        server.close();
    }

    /** An application instance: its own client, Redis store and local counting. */
    private LocalSyncRateLimitStore instance(Duration timeout) {
        return instance(timeout, 100_000);
    }

    /** A Redis store on the test clock, patient with a loaded machine, hashing keys under {@code secret} unless null. */
    private RedissonRateLimitStore redisStore(RedissonClient client, String secret) {
        RedissonRateLimitStore.Builder redis = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT);
        return secret != null ? redis.keyHashSecret(secret).build() : redis.build();
    }

    /** An application instance keeping at most {@code maximumKeys} keys in memory. */
    private LocalSyncRateLimitStore instance(Duration timeout, long maximumKeys) {
        return instance(timeout, maximumKeys, clock);
    }

    /**
     * An application instance whose own clock is {@code localClock}, Redis deciding with the test's
     * clock: the instance must follow Redis's time whatever its own clock does.
     */
    private LocalSyncRateLimitStore instance(Duration timeout, long maximumKeys, MutableClock localClock) {
        RedissonClient client = RedisClients.connect(server);
        clients.add(client);
        LocalSyncRateLimitStore store = LocalSyncRateLimitStore.builder(RedissonRateLimitStore.builder(client)
                        .clock(clock).timeout(timeout)
                        .circuitBreaker(StoreCircuitBreaker.builder().clock(clock)
                                .openDuration(timeout.compareTo(INTERVAL) > 0 ? timeout : INTERVAL).build())
                        .build())
                .clock(localClock)
                .interval(INTERVAL)
                .maximumKeys(maximumKeys)
                .build();
        instances.add(store);
        return store;
    }

    /** Whether Redis itself, deciding with the test's clock, admits a call of {@code key} now. */
    private boolean redisAdmits(String key, Tier tier) {
        RedissonClient client = RedisClients.connect(server);
        clients.add(client);
        return redisStore(client, null).tryAcquire(key, List.of(tier), 1).allowed();
    }

    /**
     * The instance's clock is set an hour back or forward while a key's first sync is on its way,
     * Redis paused: the sync's round trip is timed on the monotonic timer, and the key counts in
     * Redis's windows, every call reaching Redis; Redis's own time does not move with it.
     */
    @ParameterizedTest
    @ValueSource(longs = {-3_600_000, 3_600_000})
    void aClockSetWhileASyncIsOnItsWayLeavesTheInstanceInRedisWindows(long step) {
        MutableClock instanceClock = new MutableClock(clock.instant());
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT, 100_000, instanceClock);
        Tier tier = Tier.of(10, ofMinutes(1), FIXED_WINDOW);
        clock.alignTo(tier.window());
        clock.advance(ofSeconds(30));
        instanceClock.set(clock.instant());
        store.tryAcquire(key + ":warm", List.of(tier), 1);

        server.suspend();
        CompletableFuture<Decision> first;
        try {
            first = store.tryAcquireAsync(key, List.of(tier), 1).toCompletableFuture();
            instanceClock.set(instanceClock.instant().plusMillis(step));
        } finally {
            server.resume();
        }

        assertThat(first.join().allowed()).isTrue();
        assertAdmitsTheRestInRedisWindow(store, key, tier, 1, instanceClock);
    }

    /**
     * As {@link #aClockSetWhileASyncIsOnItsWayLeavesTheInstanceInRedisWindows}, the clock set
     * between syncs: for a key in use and for a new one.
     */
    @ParameterizedTest
    @ValueSource(longs = {-3_600_000, 3_600_000})
    void aClockSetBetweenSyncsIsTakenUpBeforeTheNextDecision(long step) {
        MutableClock instanceClock = new MutableClock(clock.instant());
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT, 100_000, instanceClock);
        Tier tier = Tier.of(10, ofMinutes(1), FIXED_WINDOW);
        clock.alignTo(tier.window());
        clock.advance(ofSeconds(30));
        instanceClock.set(clock.instant());
        String inUse = key + ":in-use";
        for (int call = 0; call < 4; call++) {
            assertThat(store.tryAcquire(inUse, List.of(tier), 1).allowed()).isTrue();
        }
        store.flush();

        instanceClock.set(instanceClock.instant().plusMillis(step));

        assertAdmitsTheRestInRedisWindow(store, inUse, tier, 4, null);
        assertAdmitsTheRestInRedisWindow(store, key, tier, 0, instanceClock);
    }

    /**
     * The instance admits what is left of the limit after {@code admitted} calls of {@code key},
     * and Redis has every call in its current window: it admits none; then, unless
     * {@code instanceClock} is null, both clocks move a window on, and Redis admits again.
     */
    private void assertAdmitsTheRestInRedisWindow(LocalSyncRateLimitStore store, String key, Tier tier,
                                                  int admitted, MutableClock instanceClock) {
        int more = 0;
        while (more < 2 * tier.limit() && store.tryAcquire(key, List.of(tier), 1).allowed()) {
            more++;
        }
        store.flush();
        assertThat(admitted + more).as("calls of %s the instance admitted", key).isEqualTo(tier.limit());
        assertThat(redisAdmits(key, tier)).as("Redis, with every call of %s in its window", key).isFalse();
        if (instanceClock != null) {
            clock.advance(tier.window());
            instanceClock.advance(tier.window());
            assertThat(redisAdmits(key, tier)).as("Redis, in its next window").isTrue();
        }
    }

    /**
     * Redis loses a window's counts (a restart, a flush): the next sync's answer does not make the
     * instance forget what it admitted itself.
     */
    @Test
    void aSyncAnswerFromARedisThatLostTheWindowDoesNotLowerWhatTheInstanceAdmitted() {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT);
        Tier tier = Tier.of(10, ofMinutes(1), FIXED_WINDOW);
        for (int call = 0; call < 6; call++) {
            assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).isTrue();
        }
        store.flush();

        server.flushAll();
        int more = 0;
        while (more < 20 && store.tryAcquire(key, List.of(tier), 1).allowed()) {
            more++;
        }

        assertThat(more).as("admitted after Redis lost the window").isEqualTo(4);
    }

    private long stored(Tier tier, String field) {
        String code = tier.algorithm() == FIXED_WINDOW ? "fw" : "sw";
        return server.tierState("sluice:{" + key + "}:" + code + tier.windowMillis(), field);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW"})
    void threeInstancesOnOneHotKeyStayWithinTheStatedBound(Algorithm algorithm) throws Exception {
        Tier tier = Tier.of(600, ofMinutes(1), algorithm);
        long share = 10; // ceil(600 x 1 s / 60 s)
        long bound = tier.limit() + (3 - 1) * share;
        List<LocalSyncRateLimitStore> three = List.of(instance(RedisClients.PATIENT), instance(RedisClients.PATIENT),
                instance(RedisClients.PATIENT));
        ExecutorService pool = Executors.newFixedThreadPool(24);
        try {
            // Two windows in a row: what was counted in the first does not spill into the second.
            for (int window = 0; window < 2; window++) {
                long total = hammer(pool, three, tier);
                three.forEach(LocalSyncRateLimitStore::flush);
                System.out.printf("%s, window %d: 3 instances admitted %d of 4,800 calls, limit %d, stated bound %d%n",
                        algorithm, window + 1, total, tier.limit(), bound);
                assertThat(total).as("admitted by three instances").isBetween(tier.limit(), bound);
                assertThat(stored(tier, "n")).as("the count in Redis").isEqualTo(total);
                // A sliding window still weighs the previous window's count at the start of the next.
                clock.advance(algorithm == SLIDING_WINDOW ? tier.window().multipliedBy(2) : tier.window());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Calls from 8 threads per instance, 200 calls each, all at once: how many were admitted. */
    private long hammer(ExecutorService pool, List<LocalSyncRateLimitStore> instances, Tier tier) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> admitted = new ArrayList<>();
        for (LocalSyncRateLimitStore store : instances) {
            for (int t = 0; t < 8; t++) {
                admitted.add(pool.submit(() -> {
                    go.await();
                    int count = 0;
                    for (int c = 0; c < 200; c++) {
                        if (store.tryAcquire(key, List.of(tier), 1).allowed()) {
                            count++;
                        }
                    }
                    return count;
                }));
            }
        }
        go.countDown();
        long total = 0;
        for (Future<Integer> result : admitted) {
            total += result.get(1, TimeUnit.MINUTES);
        }
        return total;
    }

    @Test
    void aKeyInUseSyncsOncePerInterval() {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT);
        Tier tier = Tier.of(1_000_000, ofMinutes(1), SLIDING_WINDOW);
        for (int second = 0; second < 5; second++) {
            for (int call = 0; call < 1_000; call++) {
                assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).isTrue();
            }
            clock.advance(INTERVAL);
        }
        store.flush();
        // The first call's sync, one started by a call in each later interval unless the previous
        // one was still out, and the flush's: never one per call.
        assertThat(store.statistics().syncs()).isBetween(2L, 1L + 4 + 1);
        assertThat(stored(tier, "n")).isEqualTo(5_000);
    }

    @Test
    void anInstanceLearnsOfAnotherInstancesCallsAtItsNextSync() {
        LocalSyncRateLimitStore first = instance(RedisClients.PATIENT);
        LocalSyncRateLimitStore second = instance(RedisClients.PATIENT);
        Tier tier = Tier.of(600, ofMinutes(1), FIXED_WINDOW);
        assertThat(second.tryAcquire(key, List.of(tier), 1).remaining()).isEqualTo(599);
        second.flush();
        int admitted = 0;
        while (first.tryAcquire(key, List.of(tier), 1).allowed()) {
            admitted++;
        }
        assertThat(admitted).isEqualTo(599);
        first.flush();
        assertThat(second.tryAcquire(key, List.of(tier), 1).remaining()).as("before its next sync").isEqualTo(598);

        clock.advance(INTERVAL);
        second.tryAcquire(key, List.of(tier), 1); // starts the sync, decided before its answer
        second.flush();
        assertThat(second.tryAcquire(key, List.of(tier), 1).allowed()).as("after its next sync").isFalse();
    }

    @Test
    void decidesLocallyWhileRedisIsPausedAndCountsEachCallOnce() throws Exception {
        LocalSyncRateLimitStore store = instance(Duration.ofMillis(200));
        Tier tier = Tier.of(100_000, ofMinutes(10), FIXED_WINDOW);
        for (int call = 0; call < 50; call++) {
            store.tryAcquire(key, List.of(tier), 1);
        }
        store.flush();
        assertThat(stored(tier, "n")).isEqualTo(50);

        server.suspend();
        long started = System.nanoTime();
        try {
            for (int second = 0; second < 5; second++) {
                clock.advance(INTERVAL);
                for (int call = 0; call < 100; call++) {
                    assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).isTrue();
                }
                store.flush(); // syncs time out after 200 ms; they reach Redis once it runs again
            }
            Duration outage = Duration.ofNanos(System.nanoTime() - started);
            LocalSyncRateLimitStore.Statistics during = store.statistics();
            System.out.printf("500 calls decided while Redis was paused, in %d ms; %s%n", outage.toMillis(), during);
            assertThat(outage).as("500 calls and their timed-out syncs").isLessThan(ofSeconds(10));
            assertThat(during.storeReachable()).isFalse();
            assertThat(during.failedSyncs()).isGreaterThanOrEqualTo(3);
            // Once three syncs in a row had failed, decided without waiting for the store.
            assertThat(during.decisionsWhileUnreachable()).isBetween(100L, 400L);
        } finally {
            server.resume();
        }

        clock.advance(INTERVAL);
        store.tryAcquire(key, List.of(tier), 1);
        store.flush();
        store.flush();
        assertThat(store.statistics().storeReachable()).isTrue();
        assertThat(stored(tier, "n")).as("every call counted once, the late syncs included").isEqualTo(50 + 500 + 1);
    }

    @Test
    void anAsynchronousCallWaitsForItsSyncWithoutBlockingItsThread() {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT);
        Tier tier = Tier.of(600, ofMinutes(1), FIXED_WINDOW); // a share of 10: the second call needs no sync
        server.suspend();
        CompletableFuture<Decision> first;
        try {
            first = store.tryAcquireAsync(key, List.of(tier), 1).toCompletableFuture();
            assertThat(first).as("a new key's call waits for its first sync").isNotDone();
        } finally {
            server.resume();
        }
        assertThat(first.join().remaining()).isEqualTo(599);
        assertThat(store.tryAcquireAsync(key, List.of(tier), 1).toCompletableFuture()).as("decided here")
                .isCompletedWithValueMatching(decision -> decision.remaining() == 598);
    }

    @Test
    void aSyncSentAgainIsCountedOnce() {
        RedissonClient client = RedisClients.connect(server);
        clients.add(client);
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT).build();
        Tier tier = Tier.of(100, ofMinutes(1), SLIDING_WINDOW);
        long start = clock.millis() - clock.millis() % tier.windowMillis();
        Sync sync = new Sync("instance", 7, List.of(new WindowCounts(start, 5, 0)));

        Totals first = store.sync(key, List.of(tier), sync).toCompletableFuture().join();
        Totals again = store.sync(key, List.of(tier), sync).toCompletableFuture().join();
        Totals next = store.sync(key, List.of(tier), new Sync("instance", 8, List.of(new WindowCounts(start, 2, 0))))
                .toCompletableFuture().join();

        assertThat(first.counts()).containsExactly(new WindowCounts(start, 5, 0));
        assertThat(again.counts()).containsExactly(new WindowCounts(start, 5, 0));
        assertThat(next.counts()).containsExactly(new WindowCounts(start, 7, 0));
        assertThat(first.now()).isEqualTo(clock.millis());
        assertThat(store.tryAcquire(key, List.of(tier), 1).remaining()).as("decided on the synced counts").isEqualTo(92);
    }

    @Test
    void aSyncOvertakenByALaterOneAddsNothingAndLetsTheLaterOneAddOnce() {
        RedissonClient client = RedisClients.connect(server);
        clients.add(client);
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT).build();
        Tier tier = Tier.of(100, ofMinutes(1), FIXED_WINDOW);
        long start = clock.millis() - clock.millis() % tier.windowMillis();
        Sync seventh = new Sync("instance", 7, List.of(new WindowCounts(start, 5, 0)));
        Sync eighth = new Sync("instance", 8, List.of(new WindowCounts(start, 2, 0)));

        store.sync(key, List.of(tier), seventh).toCompletableFuture().join();
        store.sync(key, List.of(tier), eighth).toCompletableFuture().join();
        // The seventh sent again (its answer was late) and landing after the eighth; then the eighth again.
        Totals late = store.sync(key, List.of(tier), seventh).toCompletableFuture().join();
        Totals resent = store.sync(key, List.of(tier), eighth).toCompletableFuture().join();

        assertThat(late.counts()).containsExactly(new WindowCounts(start, 7, 0));
        assertThat(resent.counts()).containsExactly(new WindowCounts(start, 7, 0));
    }

    @Test
    void aCallGivenBackBeforeItWasSyncedNeverReachesRedis() {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT);
        Tier tier = Tier.of(1_000_000, ofMinutes(1), FIXED_WINDOW); // a share of 16,667: no sync after the first
        for (int call = 0; call < 5; call++) {
            assertThat(store.tryAcquire(key, List.of(tier), 2).allowed()).isTrue();
        }

        store.giveBack(key, List.of(tier), 2, Duration.ZERO);
        assertThat(store.tryAcquire(key, List.of(tier), 1).remaining()).as("given back here at once")
                .isEqualTo(1_000_000 - 9);
        store.flush();
        assertThat(stored(tier, "n")).as("the calls counted in Redis").isEqualTo(9);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW"})
    void aCallGivenBackAfterItWasSyncedComesOffRedisOnceWithTheNextSync(Algorithm algorithm) {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT);
        LocalSyncRateLimitStore other = instance(RedisClients.PATIENT);
        Tier tier = Tier.of(1_000_000, ofMinutes(1), algorithm);
        clock.alignTo(ofMinutes(1));
        for (int call = 0; call < 5; call++) {
            assertThat(store.tryAcquire(key, List.of(tier), 2).allowed()).isTrue();
        }
        store.flush();
        assertThat(stored(tier, "n")).isEqualTo(10);

        store.giveBack(key, List.of(tier), 2, Duration.ZERO);
        assertThat(stored(tier, "n")).as("until the next sync").isEqualTo(10);
        store.flush();
        assertThat(stored(tier, "n")).isEqualTo(8);
        clock.advance(INTERVAL);
        store.tryAcquire(key, List.of(tier), 1);
        store.flush();
        assertThat(stored(tier, "n")).as("taken off once, whatever syncs follow").isEqualTo(9);
        assertThat(other.tryAcquire(key, List.of(tier), 1).remaining()).as("what another instance learns")
                .isEqualTo(1_000_000 - 10);
    }

    @Test
    void aCallGivenBackInThePreviousWindowComesOffThatWindowInRedis() {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT);
        Tier tier = Tier.of(1_000_000, ofMinutes(1), SLIDING_WINDOW);
        clock.alignTo(ofMinutes(1));
        clock.advance(ofSeconds(50));
        for (int call = 0; call < 5; call++) {
            assertThat(store.tryAcquire(key, List.of(tier), 2).allowed()).isTrue();
        }
        store.flush();
        clock.advance(ofSeconds(20));
        assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).isTrue();

        store.giveBack(key, List.of(tier), 2, ofSeconds(20));
        store.flush();
        assertThat(stored(tier, "p")).as("the previous window's count").isEqualTo(8);
        assertThat(stored(tier, "n")).as("this window's").isEqualTo(1);
    }

    @Test
    void aSyncSentAgainTakesOffWhatWasGivenBackOnce() {
        RedissonClient client = RedisClients.connect(server);
        clients.add(client);
        RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT).build();
        Tier tier = Tier.of(100, ofMinutes(1), SLIDING_WINDOW);
        long start = clock.millis() - clock.millis() % tier.windowMillis();
        store.sync(key, List.of(tier), new Sync("instance", 7, List.of(new WindowCounts(start, 5, 3))))
                .toCompletableFuture().join();
        Sync givingBack = new Sync("instance", 8, List.of(new WindowCounts(start, 1, 0)),
                List.of(new WindowCounts(start, 2, 1)));

        Totals first = store.sync(key, List.of(tier), givingBack).toCompletableFuture().join();
        Totals again = store.sync(key, List.of(tier), givingBack).toCompletableFuture().join();

        assertThat(first.counts()).containsExactly(new WindowCounts(start, 4, 2));
        assertThat(again.counts()).containsExactly(new WindowCounts(start, 4, 2));
    }

    @Test
    void aCallOfAKeyNoLongerHeldHereIsGivenBackInRedis() {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT, 1);
        Tier tier = Tier.of(1_000_000, ofMinutes(1), FIXED_WINDOW);
        for (int call = 0; call < 5; call++) {
            assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).isTrue();
        }
        // A second key takes the only place: the first is evicted, its counts synced.
        store.tryAcquire(key + ":another", List.of(tier), 1);
        store.flush();
        assertThat(stored(tier, "n")).isEqualTo(5);

        store.giveBack(key, List.of(tier), 1, Duration.ZERO);
        assertThat(stored(tier, "n")).isEqualTo(4);
    }

    @Test
    void anEvictedKeysLastSyncIsSentAgainUntilRedisHasIt() {
        LocalSyncRateLimitStore store = instance(Duration.ofMillis(200), 1);
        Tier tier = Tier.of(1_000_000, ofMinutes(1), FIXED_WINDOW); // a share of 16,667: no sync after the first
        for (int call = 0; call < 5; call++) {
            assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).isTrue();
        }

        server.kill();
        // A second key takes the only place: the first is evicted, and its last sync fails.
        store.tryAcquire(key + ":another", List.of(tier), 1);
        server.restart();

        for (int attempt = 0; attempt < 100 && stored(tier, "n") == 0; attempt++) {
            store.flush(); // once the client has reconnected
            RedisServer.waitBriefly();
        }
        assertThat(stored(tier, "n")).as("the evicted key's count").isEqualTo(5);
        clock.advance(INTERVAL);
        store.flush();
        assertThat(stored(tier, "n")).as("the evicted key's count, after another flush").isEqualTo(5);
        assertThat(store.statistics().failedSyncs()).as("syncs that failed").isPositive();
    }

    /**
     * A key evicted while its sync failed is taken up again by its next call, its sync still to
     * send: a new key beside it would sync first, with a later sequence, and Redis would take the
     * evicted key's sync for one it has.
     */
    @Test
    void anEvictedKeyWhoseSyncFailedIsTakenUpAgainWithItsSyncAndNothingIsLost() {
        LocalSyncRateLimitStore store = instance(Duration.ofMillis(200), 1);
        Tier tier = Tier.of(1_000_000, ofMinutes(1), FIXED_WINDOW); // a share of 16,667: no sync after the first
        for (int call = 0; call < 5; call++) {
            assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).isTrue();
        }
        server.kill();
        // A second key takes the only place: the first is evicted, and its sync fails.
        store.tryAcquire(key + ":another", List.of(tier), 1);
        server.restart();

        assertThat(store.tryAcquire(key, List.of(tier), 1).allowed()).as("the evicted key's next call").isTrue();
        for (int attempt = 0; attempt < 100 && stored(tier, "n") < 6; attempt++) {
            store.flush(); // once the client has reconnected
            RedisServer.waitBriefly();
        }
        store.flush();

        assertThat(stored(tier, "n")).as("the key's calls in Redis").isEqualTo(6);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aLongKeySyncedCountsWhereTheStoreDecidesIt(boolean keyHashSecret) {
        RedissonClient client = RedisClients.connect(server);
        clients.add(client);
        String secret = "a secret of at least 16 bytes";
        RedissonRateLimitStore deciding = redisStore(client, keyHashSecret ? secret : null);
        LocalSyncRateLimitStore local = LocalSyncRateLimitStore.builder(redisStore(client, keyHashSecret ? secret : null))
                .clock(clock).interval(INTERVAL).build();
        instances.add(local);
        String longKey = key + ":" + "7".repeat(1_000);
        Tier tier = Tier.of(100, ofMinutes(1), FIXED_WINDOW);

        for (int call = 0; call < 5; call++) {
            local.tryAcquire(longKey, List.of(tier), 1);
        }
        local.flush();

        assertThat(deciding.tryAcquire(longKey, List.of(tier), 1).remaining()).as("left after 5 synced and this call")
                .isEqualTo(94);
    }

    @Test
    void tiersItCannotHonourAreRefusedWhenTheLimiterIsBuilt() {
        LocalSyncRateLimitStore store = instance(RedisClients.PATIENT);
        for (Tier tier : List.of(Tier.of(5, ofMinutes(1), Algorithm.SLIDING_LOG),
                Tier.of(5, ofMinutes(1), Algorithm.TOKEN_BUCKET),
                Tier.of(5, ofMinutes(1), FIXED_WINDOW).withBlockFor(ofMinutes(15)))) {
            assertThat(store.supports(tier)).as("%s", tier).isFalse();
            assertThatThrownBy(() -> RateLimiter.builder().name("otp").store(store).tier(tier).build())
                    .as("%s", tier).hasMessageContaining(tier.toString());
        }
        assertThat(store.supports(Tier.of(5, ofMinutes(1), SLIDING_WINDOW).withCountRejected())).isTrue();
    }
}
