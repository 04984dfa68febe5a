package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.Algorithm;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;

/** Memory bounds of the in-memory store, floods included; its decisions are the contract suite's business. */
class InMemoryRateLimitStoreTest {

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());

    @Test
    void dropsAKeyOnceItsStateIsBackToThatOfAFreshKey() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> tiers = List.of(Tier.of(10, ofSeconds(1), TOKEN_BUCKET), Tier.of(5, ofSeconds(3), SLIDING_LOG));
        store.tryAcquire("k", tiers, 2);

        millis.addAndGet(2_999);
        assertThat(store.estimatedKeyCount()).as("the log still holds an entry").isEqualTo(1);
        // Expiry is rounded up to the next 1,024 ms and told 1,024 ms later, and Caffeine's timer
        // wheel sweeps expired keys in steps of about a second.
        millis.addAndGet(1 + 2_200);
        assertThat(store.estimatedKeyCount()).isZero();
    }

    @Test
    void keysCountedAfterTheClockWasSetBackAreKeptForTheirWholeWindow() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> onePerSecond = List.of(Tier.of(1, ofSeconds(1), FIXED_WINDOW));
        long start = millis.get();
        millis.addAndGet(ofMinutes(15).toMillis());
        store.tryAcquire("earlier", onePerSecond, 1);
        // A test clock reset between tests, or a host clock stepped back.
        millis.set(start);

        assertThat(store.tryAcquire("k", onePerSecond, 1).allowed()).isTrue();
        millis.addAndGet(500);
        assertThat(store.tryAcquire("k", onePerSecond, 1).allowed()).as("counted within the window").isFalse();
        assertThat(store.estimatedKeyCount()).isEqualTo(2);
    }

    @Test
    void aClockSetBackAnHourLeavesBlocksAndWaitsRunningAsTheyDid() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> otp = List.of(Tier.of(3, ofMinutes(1), SLIDING_WINDOW).withBlockFor(ofMinutes(15)));
        List<Tier> log = List.of(Tier.of(2, ofMinutes(10), SLIDING_LOG));
        for (int i = 0; i < 4; i++) {
            store.tryAcquire("abuser", otp, 1);
        }
        store.tryAcquire("caller", log, 1);
        store.tryAcquire("caller", log, 1);

        millis.addAndGet(-ofMinutes(60).toMillis());
        assertThat(store.tryAcquire("abuser", otp, 1).retryAfter()).isEqualTo(ofMinutes(15));
        millis.addAndGet(ofMinutes(10).toMillis());
        Decision blocked = store.tryAcquire("abuser", otp, 1);
        assertThat(blocked.allowed()).isFalse();
        assertThat(blocked.retryAfter()).as("what is left of the block").isEqualTo(ofMinutes(5));
        assertThat(store.tryAcquire("caller", log, 1).allowed()).as("the log's entries left with its window").isTrue();

        millis.addAndGet(ofMinutes(5).toMillis());
        assertThat(store.tryAcquire("abuser", otp, 1).allowed()).as("the block is over when it said").isTrue();
    }

    @Test
    void aClockSetForwardAnHourMovesEveryKeyForwardAndThenRunsOnAsBefore() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> otp = List.of(Tier.of(3, ofMinutes(1), SLIDING_WINDOW).withBlockFor(ofMinutes(15)));
        for (int i = 0; i < 4; i++) {
            store.tryAcquire("abuser", otp, 1);
        }

        millis.addAndGet(ofMinutes(60).toMillis());
        assertThat(store.tryAcquire("abuser", otp, 1).allowed()).as("an injected clock's hour has passed").isTrue();
        for (int i = 0; i < 3; i++) {
            store.tryAcquire("abuser", otp, 1);
        }
        millis.addAndGet(ofMinutes(1).toMillis());
        assertThat(store.tryAcquire("abuser", otp, 1).retryAfter()).isEqualTo(ofMinutes(14));
    }

    @Test
    void decisionsRacingTheDropOfTheirKeysLoseNoCount() throws Exception {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        int limit = 50;
        List<Tier> tiers = List.of(Tier.of(limit, ofSeconds(1), FIXED_WINDOW));
        int threads = 4;
        int keys = 8;
        int rounds = 300;
        // Each round is a window of its own, every key back to a fresh one at its start: Caffeine
        // drops the keys while the round's first calls decide for them.
        CyclicBarrier nextWindow = new CyclicBarrier(threads, () -> millis.addAndGet(5_000));
        AtomicLongArray admitted = new AtomicLongArray(rounds * keys);
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        try {
            List<Future<?>> callers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                callers.add(pool.submit(() -> {
                    for (int round = 0; round < rounds; round++) {
                        for (int i = 0; i < 4 * limit; i++) {
                            int key = (i + thread) % keys;
                            if (store.tryAcquire("k" + key, tiers, 1).allowed()) {
                                admitted.incrementAndGet(round * keys + key);
                            }
                        }
                        nextWindow.await(10, TimeUnit.SECONDS);
                    }
                    return null;
                }));
            }
            // Has Caffeine drop what it finds expired all the time, between the callers' decisions.
            Future<?> sweeper = pool.submit(() -> {
                while (!callers.stream().allMatch(Future::isDone)) {
                    store.estimatedKeyCount();
                }
            });
            for (Future<?> caller : callers) {
                caller.get(60, TimeUnit.SECONDS);
            }
            sweeper.get(10, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        for (int i = 0; i < admitted.length(); i++) {
            assertThat(admitted.get(i)).as("calls of key %d admitted in round %d", i % keys, i / keys).isEqualTo(limit);
        }
    }

    @Test
    void holdsNoMoreThanTheMaximumNumberOfKeys() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).maximumKeys(100).build();
        List<Tier> tiers = List.of(Tier.of(10, ofSeconds(60), SLIDING_LOG));
        for (int i = 0; i < 10_000; i++) {
            store.tryAcquire("flood:" + i, tiers, 1);
        }
        assertThat(store.estimatedKeyCount()).isLessThanOrEqualTo(100);
    }

    @Test
    void aFloodOfAMillionOtherKeysCannotLiftABlock() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> otp = List.of(Tier.of(3, ofMinutes(1), SLIDING_WINDOW).withBlockFor(ofMinutes(15)));
        for (int i = 0; i < 4; i++) {
            store.tryAcquire("abuser", otp, 1);
        }
        long heapBefore = usedHeapAfterGc();

        for (int i = 0; i < 1_000_000; i++) {
            store.tryAcquire("flood:" + i, otp, 1);
        }

        assertThat(store.tryAcquire("abuser", otp, 1).allowed()).as("the blocked key").isFalse();
        assertThat(store.estimatedKeyCount()).isLessThanOrEqualTo(100_001);
        long heapGrowth = usedHeapAfterGc() - heapBefore;
        System.out.printf("MEMORY after a flood of 1,000,000 keys: %d keys held, heap grew %d MB%n",
                store.estimatedKeyCount(), heapGrowth >> 20);
        assertThat(heapGrowth).as("bytes held for 100,000 keys").isLessThan(200L << 20);
    }

    @Test
    void restrictedKeysHaveABoundOfTheirOwnAndTheFirstKeepTheirRestriction() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock)
                .maximumKeys(100).maximumRestrictedKeys(100).build();
        List<Tier> onePerMinute = List.of(Tier.of(1, ofMinutes(1), FIXED_WINDOW).withBlockFor(ofMinutes(15)));
        store.tryAcquire("abuser", onePerMinute, 1);
        store.tryAcquire("abuser", onePerMinute, 1);

        // Every key of this flood is restricted too: its next call would be rejected.
        for (int i = 0; i < 10_000; i++) {
            store.tryAcquire("flood:" + i, onePerMinute, 1);
        }

        assertThat(store.tryAcquire("abuser", onePerMinute, 1).allowed()).isFalse();
        assertThat(store.estimatedKeyCount()).isLessThanOrEqualTo(200);
    }

    @Test
    void aKeyFreeOfItsRestrictionCountsAgainstTheBoundAgain() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock)
                .maximumKeys(10).maximumRestrictedKeys(1).build();
        List<Tier> twoPerMinute = List.of(Tier.of(2, ofMinutes(1), FIXED_WINDOW));
        store.tryAcquire("first", twoPerMinute, 2);
        store.tryAcquire("second", twoPerMinute, 2);
        millis.addAndGet(ofMinutes(1).toMillis());
        store.tryAcquire("first", twoPerMinute, 1);

        // The room "first" left among the restricted keys is "third"'s now.
        store.tryAcquire("third", twoPerMinute, 2);
        for (int i = 0; i < 1_000; i++) {
            store.tryAcquire("flood:" + i, twoPerMinute, 1);
        }
        assertThat(store.tryAcquire("third", twoPerMinute, 1).allowed()).isFalse();
    }

    @Test
    void keepsAKeyOfAnyLengthInAFewDozenBytes() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> tiers = List.of(Tier.of(3, ofMinutes(1), SLIDING_LOG));
        long heapBefore = usedHeapAfterGc();
        for (int i = 0; i < 40; i++) {
            store.tryAcquire(String.valueOf((char) ('a' + i % 26)).repeat(4_000_000) + i, tiers, 1);
        }
        assertThat(usedHeapAfterGc() - heapBefore).as("bytes held for 40 keys of 4 MB each").isLessThan(20L << 20);
        String huge = "+44".repeat(1_000_000);
        store.tryAcquire(huge, tiers, 3);
        assertThat(store.tryAcquire(huge, tiers, 1).allowed()).as("still one key").isFalse();
        assertThat(store.tryAcquire(huge + "0", tiers, 1).allowed()).as("another one").isTrue();
    }

    @Test
    void aLimitersKeyIsTheStoreKeyOfItsNameAndTheKeyWhateverItsLength() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> tiers = List.of(Tier.of(2, ofMinutes(1), FIXED_WINDOW));
        RateLimiter limiter = RateLimiter.builder().name("api").store(store).tiers(tiers).build();
        // "api:" and 124 characters are kept as they are; one more, and the store keeps a digest.
        for (String key : List.of("user-1", "u".repeat(124), "u".repeat(125), "#user")) {
            limiter.tryAcquire(key);
            assertThat(store.tryAcquire("api:" + key, tiers, 1).allowed()).as("the second call of " + key).isTrue();
            assertThat(limiter.tryAcquire(key).allowed()).as("the third call of " + key).isFalse();
            assertThat(store.tryAcquire("api:" + key, tiers, 1).allowed()).as("the fourth call of " + key).isFalse();
            assertThat(limiter.tryAcquire(key + "x").allowed()).as("another key than " + key).isTrue();
            assertThat(store.tryAcquire("ap" + key, tiers, 1).allowed()).as("another key than " + key).isTrue();
        }
    }

    @Test
    void aSlidingLogCallOfAMillionPermitsTakesNoMoreMemoryThanOne() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> million = List.of(Tier.of(1_000_000, ofMinutes(1), SLIDING_LOG));
        long heapBefore = usedHeapAfterGc();
        for (int i = 0; i < 200; i++) {
            store.tryAcquire("k" + i, million, 1_000_000);
        }
        assertThat(usedHeapAfterGc() - heapBefore).as("bytes held for 200 million permits").isLessThan(20L << 20);
    }

    private static long usedHeapAfterGc() {
        Runtime runtime = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return runtime.totalMemory() - runtime.freeMemory();
    }

    @Test
    void refusesANonPositiveBound() {
        assertThatThrownBy(() -> InMemoryRateLimitStore.builder().maximumKeys(0))
                .hasMessageContaining("maximumKeys must be at least 1");
        assertThatThrownBy(() -> InMemoryRateLimitStore.builder().maximumRestrictedKeys(-1))
                .hasMessageContaining("maximumRestrictedKeys must be at least 0");
    }

    @Test
    void countedRejectionsOfTheLargestCostsNeverWrapAround() {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        for (Algorithm algorithm : List.of(FIXED_WINDOW, SLIDING_WINDOW)) {
            Tier tier = Tier.of(Tier.MAX_LIMIT_TIMES_WINDOW_MILLIS, Duration.ofMillis(1), algorithm).withCountRejected();
            long cost = tier.limit();
            store.tryAcquire("k" + algorithm, List.of(tier), cost);
            // 2^63 / 2^52 counted permits would wrap a long around: more calls than that, in one millisecond.
            for (int i = 0; i < 2_100; i++) {
                assertThat(store.tryAcquire("k" + algorithm, List.of(tier), cost).allowed()).as("%s call %d", algorithm, i)
                        .isFalse();
            }
        }
    }

    /**
     * A pooled thread that decided for a key last keeps nothing of it once the store dropped the
     * key: the key, which may be personal data, can be collected while the thread idles.
     */
    @Test
    void anIdlePooledThreadKeepsNoKeyTheStoreHasDropped() throws Exception {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> tiers = List.of(Tier.of(5, ofMinutes(1), FIXED_WINDOW));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            WeakReference<String> kept = decidedOn(pool, store, new String("+447700900123".toCharArray()), tiers);
            store.reset("+447700900123", tiers);
            assertCollected(kept, "the key, after the store dropped it");
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A key the store let expire leaves nothing behind, not even the place where the store finds
     * keys decided lately: the key can be collected.
     */
    @Test
    void aKeyThatExpiredIsKeptNowhere() throws Exception {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
        List<Tier> tiers = List.of(Tier.of(5, ofSeconds(1), SLIDING_WINDOW));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            WeakReference<String> kept = decidedOn(pool, store, new String("+447700900123".toCharArray()), tiers);
            millis.addAndGet(ofSeconds(10).toMillis());
            assertThat(store.estimatedKeyCount()).as("keys held after the window").isZero();
            assertCollected(kept, "the key, after it expired");
        } finally {
            pool.shutdownNow();
        }
    }

    /** Asserts that nothing strong reaches the referent any longer: full collections clear the reference. */
    private static void assertCollected(WeakReference<String> kept, String what) {
        for (int i = 0; i < 20 && kept.get() != null; i++) {
            System.gc();
        }
        assertThat(kept.get()).as(what).isNull();
    }

    /** Decides once for {@code key} on {@code pool}'s thread, keeping only a weak reference to it. */
    private static WeakReference<String> decidedOn(ExecutorService pool, InMemoryRateLimitStore store, String key,
                                                   List<Tier> tiers) throws Exception {
        pool.submit(() -> store.tryAcquire(key, tiers, 1)).get(10, TimeUnit.SECONDS);
        return new WeakReference<>(key);
    }
}
