package dev.sluice.redisson;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.Reservation;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.api.RedissonClient;

/**
 * The Lua scripts against the in-memory store, their reference: random calls (tier mixes, costs,
 * counted rejections, blocks, changed limits, clocks set back by up to a second, reservations
 * for callers that wait) and give-backs and recounts between them (of calls admitted, some taken to
 * be a little earlier or later, and of calls never made, with random costs and times ago, negative
 * ones too), and pauses of random lengths, must leave both in states that make identical
 * decisions. Each seed is one reproducible history;
 * half of them count in millions of permits, with costs to match, where a store keeping an entry
 * per permit would differ in time and memory; every third has only token buckets, which
 * reservations run into debt. Calls decided many to a script call, on one key or several, in the
 * order given, identical ones among them sent once, get the decisions the in-memory store makes
 * deciding them one by one.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DifferentialTest {

    private static final long[] WINDOWS = {1_000, 3_000, 60_000};
    private static final Algorithm[] RATE_ALGORITHMS = Arrays.stream(Algorithm.values())
            .filter(algorithm -> algorithm != Algorithm.CONCURRENCY).toArray(Algorithm[]::new);

    private RedissonClient client;

    @BeforeAll
    void connect(RedisServer server) {
        client = RedisClients.connect(server);
    }

    @AfterAll
    void disconnect() {
        client.shutdown();
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
    void decidesEveryCallAsTheInMemoryStoreDoes(long seed) {
        Random random = new Random(seed);
        MutableClock clock = new MutableClock(Instant.ofEpochMilli(5_000_000_000_000L + random.nextInt(1_000_000)));
        RateLimitStore reference = InMemoryRateLimitStore.builder().clock(clock).build();
        RateLimitStore redis = RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build();
        String key = "differential:" + seed + ":" + clock.instant().toEpochMilli();
        long scale = random.nextBoolean() ? 1 : 1_000_000;
        List<Tier> tiers = tiers(random, scale, seed % 3 == 0);

        long latest = clock.millis();
        // The time and cost of each call admitted.
        List<long[]> admitted = new ArrayList<>();
        for (int step = 0; step < 80; step++) {
            if (random.nextInt(10) == 0) {
                tiers = changeALimit(random, tiers, scale);
            }
            int move = random.nextInt(20);
            if (move == 0) {
                // At most a second behind the latest time either store read: a clock set back
                // further is followed by the in-memory store from that time on, for every key at
                // once, which a script deciding one key cannot mirror (see docs/redis.md).
                clock.set(Instant.ofEpochMilli(Math.max(latest - 1_000, clock.millis() - random.nextInt(2_000))));
            } else if (move < 12) {
                clock.advanceMillis(random.nextInt(move < 9 ? 300 : 5_000));
            }
            latest = Math.max(latest, clock.millis());
            long smallest = tiers.stream().mapToLong(Tier::limit).min().orElseThrow();
            if (random.nextInt(4) == 0) {
                giveBack(random, admitted, clock.millis(), smallest, scale, reference, redis, key, tiers);
            }
            if (random.nextInt(6) == 0) {
                recount(random, admitted, clock.millis(), smallest, scale, reference, redis, key, tiers);
            }
            if (random.nextInt(15) == 0) {
                Duration pause = Duration.ofMillis(random.nextInt(6_000) - 500);
                reference.pause(key, tiers, pause);
                redis.pause(key, tiers, pause);
            }
            long cost = 1 + random.nextLong(Math.min(smallest, 3 * scale));

            Decision decision;
            if (random.nextInt(3) == 0) {
                Duration maxWait = Duration.ofMillis(random.nextInt(8_000));
                Reservation expected = reference.reserve(key, tiers, cost, maxWait);
                Reservation actual = redis.reserve(key, tiers, cost, maxWait);
                assertThat(actual).as("seed %d, step %d, %s, cost %d, maxWait %s", seed, step, tiers, cost, maxWait)
                        .isEqualTo(expected);
                decision = actual.decision();
            } else {
                Decision expected = reference.tryAcquire(key, tiers, cost);
                decision = redis.tryAcquire(key, tiers, cost);
                assertThat(decision).as("seed %d, step %d, %s, cost %d", seed, step, tiers, cost).isEqualTo(expected);
            }
            if (decision.allowed()) {
                admitted.add(new long[] {clock.millis(), cost});
            }
        }
    }

    /**
     * Gives back, in both stores, a call admitted (at its time, or a little off it) or one never
     * made; every decision after it must agree.
     */
    private static void giveBack(Random random, List<long[]> admitted, long now, long smallest, long scale,
                                 RateLimitStore reference, RateLimitStore redis, String key, List<Tier> tiers) {
        long cost;
        long agoMillis;
        if (!admitted.isEmpty() && random.nextInt(3) > 0) {
            long[] call = admitted.remove(random.nextInt(admitted.size()));
            cost = Math.min(call[1], smallest);
            agoMillis = now - call[0] + (random.nextInt(4) == 0 ? random.nextInt(401) - 200 : 0);
        } else {
            cost = 1 + random.nextLong(Math.min(smallest, 3 * scale));
            agoMillis = random.nextInt(12_000) - 1_000;
        }
        Duration ago = Duration.ofMillis(agoMillis);
        reference.giveBack(key, tiers, cost, ago);
        redis.giveBack(key, tiers, cost, ago);
    }

    /**
     * Recounts, in both stores, a call admitted (at its time, or a little off it, then taken to
     * be admitted now) or one never made; every decision after it must agree.
     */
    private static void recount(Random random, List<long[]> admitted, long now, long smallest, long scale,
                                RateLimitStore reference, RateLimitStore redis, String key, List<Tier> tiers) {
        long cost;
        long agoMillis;
        if (!admitted.isEmpty() && random.nextInt(3) > 0) {
            long[] call = admitted.get(random.nextInt(admitted.size()));
            cost = Math.min(call[1], smallest);
            agoMillis = now - call[0] + (random.nextInt(4) == 0 ? random.nextInt(401) - 200 : 0);
            call[0] = now;
        } else {
            cost = 1 + random.nextLong(Math.min(smallest, 3 * scale));
            agoMillis = random.nextInt(12_000) - 1_000;
        }
        Duration ago = Duration.ofMillis(agoMillis);
        reference.recount(key, tiers, cost, ago);
        redis.recount(key, tiers, cost, ago);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
    void decidesCallsSentTogetherAsTheInMemoryStoreDecidesThemOneByOne(long seed) {
        Random random = new Random(seed);
        MutableClock clock = new MutableClock(Instant.ofEpochMilli(5_000_000_000_000L + random.nextInt(1_000_000)));
        RateLimitStore reference = InMemoryRateLimitStore.builder().clock(clock).build();
        RedissonRateLimitStore redis = RedissonRateLimitStore.builder(client).clock(clock)
                .timeout(RedisClients.PATIENT).build();
        long scale = random.nextBoolean() ? 1 : 1_000_000;
        // A few keys, each with tiers of its own, so that a script call names some keys many times.
        List<String> keys = new ArrayList<>();
        List<List<Tier>> tiersOf = new ArrayList<>();
        for (int k = 0; k < 1 + random.nextInt(3); k++) {
            keys.add("together:" + seed + ":" + k + ":" + clock.instant().toEpochMilli());
            tiersOf.add(tiers(random, scale, seed % 3 == 0));
        }

        for (int step = 0; step < 30; step++) {
            if (random.nextInt(4) == 0) {
                clock.advanceMillis(random.nextInt(3_000));
            }
            List<RedissonRateLimitStore.Call> calls = new ArrayList<>();
            List<Object> expected = new ArrayList<>();
            for (int c = 0; c < 1 + random.nextInt(40); c++) {
                int k = random.nextInt(keys.size());
                if (random.nextInt(20) == 0) {
                    tiersOf.set(k, changeALimit(random, tiersOf.get(k), scale));
                }
                List<Tier> tiers = tiersOf.get(k);
                long smallest = tiers.stream().mapToLong(Tier::limit).min().orElseThrow();
                // Cost 1 half the time, so that identical calls can fill a tier many at a time.
                long cost = random.nextBoolean() ? 1 : 1 + random.nextLong(Math.min(smallest, 3 * scale));
                long maxWait = random.nextInt(3) == 0 ? random.nextInt(8_000) : 0;
                // Identical calls one after the other, which are sent once with their number.
                for (int same = random.nextInt(4) == 0 ? 2 + random.nextInt(20) : 1; same > 0; same--) {
                    calls.add(redis.call(keys.get(k), tiers, cost, maxWait));
                    expected.add(maxWait > 0 ? reference.reserve(keys.get(k), tiers, cost, Duration.ofMillis(maxWait))
                            : reference.tryAcquire(keys.get(k), tiers, cost));
                }
            }

            List<byte[]> replies = DecideScript.run(client, calls, Double.NaN);

            for (int c = 0; c < calls.size(); c++) {
                Object actual = expected.get(c) instanceof Reservation ? redis.reservation(replies.get(c))
                        : redis.decision(replies.get(c));
                assertThat(actual).as("seed %d, step %d, call %d of %d", seed, step, c, calls.size())
                        .isEqualTo(expected.get(c));
            }
        }
    }

    /**
     * Calls of one millisecond, the store's ninth to eleventh, whose ids in decimal would sort
     * otherwise than they came (10 before 9): a counted rejection drops the oldest permits, and a
     * give-back looks for a call of its cost, in the order the calls came, in both stores.
     */
    @Test
    void trimsAndGivesBackTheCallsOfOneMillisecondInTheOrderTheyCame() {
        MutableClock clock = new MutableClock(Instant.ofEpochMilli(5_000_000_000_000L));
        RateLimitStore reference = InMemoryRateLimitStore.builder().clock(clock).build();
        RateLimitStore redis = RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build();
        List<Tier> log = List.of(Tier.of(3, Duration.ofSeconds(1), Algorithm.SLIDING_LOG).withCountRejected());
        String key = "in-order:" + System.nanoTime();
        for (int call = 1; call <= 8; call++) {
            redis.tryAcquire(key + ":before", log, 1);
        }
        List<Decision> expected = new ArrayList<>();
        List<Decision> actual = new ArrayList<>();
        for (RateLimitStore store : List.of(reference, redis)) {
            List<Decision> decisions = store == reference ? expected : actual;
            decisions.add(store.tryAcquire(key, log, 2));
            decisions.add(store.tryAcquire(key, log, 1));
            decisions.add(store.tryAcquire(key, log, 1));
            store.giveBack(key, log, 2, Duration.ZERO);
            decisions.add(store.tryAcquire(key, log, 1));
            decisions.add(store.tryAcquire(key, log, 1));
        }
        assertThat(actual).isEqualTo(expected);
        assertThat(expected.get(3).allowed()).as("the rejection dropped a permit of the first call, not the second")
                .isFalse();
    }

    /**
     * A concurrency tier beside random rate tiers, with calls that end (their permits given back)
     * in random order between decisions, within the lease: both stores hold and free the same
     * permits, decided atomically with the rate tiers.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void holdsAndFreesPermitsAsTheInMemoryStoreDoes(long seed) {
        Random random = new Random(seed);
        MutableClock clock = new MutableClock(Instant.ofEpochMilli(5_000_000_000_000L + random.nextInt(1_000_000)));
        RateLimitStore reference = InMemoryRateLimitStore.builder().clock(clock).build();
        RateLimitStore redis = RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build();
        String key = "differential-concurrency:" + seed + ":" + clock.instant().toEpochMilli();
        Tier concurrency = Tier.concurrency(1 + random.nextInt(4), Duration.ofMinutes(5));
        List<Tier> tiers = new ArrayList<>(random.nextBoolean() ? tiers(random, 1, false) : List.of());
        tiers.add(random.nextInt(tiers.size() + 1), concurrency);
        // The cost of each call running.
        List<Long> running = new ArrayList<>();
        for (int step = 0; step < 80; step++) {
            clock.advanceMillis(random.nextInt(300));
            while (!running.isEmpty() && random.nextInt(3) == 0) {
                long cost = running.remove(random.nextInt(running.size()));
                reference.giveBack(key, List.of(concurrency), cost, Duration.ZERO);
                redis.giveBack(key, List.of(concurrency), cost, Duration.ZERO);
            }
            long smallest = tiers.stream().mapToLong(Tier::limit).min().orElseThrow();
            long cost = 1 + random.nextLong(Math.min(smallest, 2));
            Decision expected = reference.tryAcquire(key, tiers, cost);
            Decision actual = redis.tryAcquire(key, tiers, cost);
            assertThat(actual).as("seed %d, step %d, %s, cost %d, running %s", seed, step, tiers, cost, running)
                    .isEqualTo(expected);
            if (actual.allowed()) {
                running.add(cost);
            }
        }
    }

    private static List<Tier> tiers(Random random, long scale, boolean tokenBucketsOnly) {
        List<Tier> tiers = new ArrayList<>();
        for (long window : WINDOWS) {
            if (tiers.isEmpty() || random.nextBoolean()) {
                Algorithm algorithm = tokenBucketsOnly ? Algorithm.TOKEN_BUCKET
                        : RATE_ALGORITHMS[random.nextInt(RATE_ALGORITHMS.length)];
                Tier tier = Tier.of(scale * (2 + random.nextInt(6)), Duration.ofMillis(window), algorithm);
                if (random.nextInt(4) == 0) {
                    tier = tier.withCountRejected();
                }
                if (random.nextInt(4) == 0) {
                    tier = tier.withBlockFor(Duration.ofMillis(500 + random.nextInt(5_000)));
                }
                tiers.add(tier);
            }
        }
        return tiers;
    }

    private static List<Tier> changeALimit(Random random, List<Tier> tiers, long scale) {
        List<Tier> changed = new ArrayList<>(tiers);
        int index = random.nextInt(changed.size());
        Tier tier = changed.get(index);
        changed.set(index, new Tier(scale * (2 + random.nextInt(6)), tier.window(), tier.algorithm(), tier.countRejected(),
                tier.blockFor()));
        return changed;
    }
}
