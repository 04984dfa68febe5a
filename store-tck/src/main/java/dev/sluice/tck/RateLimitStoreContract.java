package dev.sluice.tck;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofDays;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The contract every {@link RateLimitStore} keeps: extend this class in a store's tests and
 * implement {@link #createStore(MutableClock)}.
 *
 * <pre class="code">
 * class MyStoreTest extends RateLimitStoreContract {
 *     &#64;Override
 *     protected RateLimitStore createStore(MutableClock clock) {
 *         return MyStore.builder().clock(clock).build();
 *     }
 * }
 * </pre>
 *
 * <p>Each test gets a fresh store, a fresh key, and a clock that starts at a random instant
 * centuries ahead (printed when a test fails), so that nothing depends on today's date or on
 * small numbers. Windows are aligned to the epoch; tests that depend on where a window starts
 * move the clock there first.
 *
 * <p>A store that implements only some algorithms or tier options says so with
 * {@link RateLimitStore#supportedAlgorithms()} and {@link RateLimitStore#supports(Tier)}: tests
 * of the others are reported as skipped, naming what is missing, and
 * {@link Requests#unsupportedTiersAreRefusedByName()} checks that the store refuses such tiers
 * clearly.
 */
public abstract class RateLimitStoreContract {

    /** The clock every store under test reads. */
    protected MutableClock clock;

    /** The store under test, new for each test. */
    protected RateLimitStore store;

    /** A key no other test uses. */
    protected String key;

    @RegisterExtension
    final TestWatcher startReporter = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, @Nullable Throwable cause) {
            System.err.println(context.getDisplayName() + " failed with the clock started at " + start);
        }
    };

    private Instant start;

    /**
     * Creates the store under test, reading time from {@code clock} (or from a server whose time
     * follows it).
     *
     * @param clock the test clock
     * @return a store
     */
    protected abstract RateLimitStore createStore(MutableClock clock);

    /**
     * Creates the clock for a test. Override to carry the test's time to where the store reads
     * it, for instance a server clock.
     *
     * @param start the random instant the test starts at
     * @return the clock
     */
    protected MutableClock createClock(Instant start) {
        return new MutableClock(start);
    }

    /**
     * Releases the store after a test; by default closes it when it is {@link AutoCloseable}.
     *
     * @param store the store under test
     * @throws Exception when closing fails
     */
    protected void closeStore(RateLimitStore store) throws Exception {
        if (store instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }

    /**
     * Forgets every key of the store under test, as test support does between tests; by default
     * with {@link RateLimitStores#clear}. Override for a store keeping counts in another store,
     * to clear both.
     *
     * @param store the store under test
     */
    protected void clear(RateLimitStore store) {
        RateLimitStores.clear(store);
    }

    @BeforeEach
    void createStoreAndKey() {
        // Between the years 2100 and 2250: past any 32-bit second count, within 64-bit epoch nanoseconds.
        start = Instant.ofEpochMilli(ThreadLocalRandom.current().nextLong(4_102_444_800_000L, 8_836_128_000_000L));
        clock = createClock(start);
        store = createStore(clock);
        key = "tck:" + UUID.randomUUID();
    }

    @AfterEach
    void releaseStore() throws Exception {
        closeStore(store);
    }

    // ---------------------------------------------------------------- helpers

    /**
     * Asks the store for one call of cost 1 on the test's key.
     *
     * @param tiers the tiers
     * @return the decision
     */
    protected Decision acquire(Tier... tiers) {
        return store.tryAcquire(key, List.of(tiers), 1);
    }

    /**
     * Asks the store for one call on the test's key.
     *
     * @param cost  the cost
     * @param tiers the tiers
     * @return the decision
     */
    protected Decision acquire(long cost, Tier... tiers) {
        return store.tryAcquire(key, List.of(tiers), cost);
    }

    /**
     * Asks the store for calls of cost 1 until one is rejected.
     *
     * @param tiers the tiers
     * @return how many were admitted
     */
    protected int admitUntilRejected(Tier... tiers) {
        int admitted = 0;
        while (acquire(tiers).allowed()) {
            admitted++;
            assertThat(admitted).as("calls admitted without a rejection").isLessThan(100_000);
        }
        return admitted;
    }

    /**
     * Skips the running test, naming the algorithm, when the store does not implement it.
     *
     * @param algorithm the algorithm the test needs
     */
    protected void assumeSupported(Algorithm algorithm) {
        assumeTrue(store.supportedAlgorithms().contains(algorithm),
                () -> store.getClass().getSimpleName() + " does not support " + algorithm);
    }

    /**
     * Skips the running test, naming the tier, when the store cannot honour it.
     *
     * @param tier the tier the test needs
     */
    protected void assumeSupported(Tier tier) {
        assumeTrue(store.supports(tier), () -> store.getClass().getSimpleName() + " does not support " + tier);
    }

    /** An admitted decision bound by {@code tier}: its limit and window. */
    static Decision admitted(Tier tier, long remaining, long resetAfterMillis) {
        return new Decision(true, tier.limit(), remaining, ofMillis(resetAfterMillis), Duration.ZERO, tier.window());
    }

    /** A rejection bound by {@code tier}: its limit and window. */
    static Decision rejected(Tier tier, long remaining, long resetAfterMillis, long retryAfterMillis) {
        return new Decision(false, tier.limit(), remaining, ofMillis(resetAfterMillis), ofMillis(retryAfterMillis),
                tier.window());
    }

    // ---------------------------------------------------------------- algorithms

    @Nested
    @DisplayName("FIXED_WINDOW")
    class FixedWindow {

        private final Tier fivePerMinute = Tier.of(5, ofMinutes(1), FIXED_WINDOW);

        @BeforeEach
        void supported() {
            assumeSupported(FIXED_WINDOW);
        }

        @Test
        void admitsTheLimitPerWindowThenRejectsUntilTheWindowEnds() {
            clock.alignTo(ofMinutes(1));
            clock.advance(ofSeconds(20));

            for (int remaining = 4; remaining >= 0; remaining--) {
                assertThat(acquire(fivePerMinute)).isEqualTo(admitted(fivePerMinute, remaining, 40_000));
            }
            assertThat(acquire(fivePerMinute)).isEqualTo(rejected(fivePerMinute, 0, 40_000, 40_000));

            clock.advanceMillis(39_999);
            assertThat(acquire(fivePerMinute)).isEqualTo(rejected(fivePerMinute, 0, 1, 1));
            clock.advanceMillis(1);
            assertThat(acquire(fivePerMinute)).isEqualTo(admitted(fivePerMinute, 4, 60_000));
        }

        @Test
        void windowsAreAlignedToTheEpochNotToTheFirstCall() {
            clock.alignTo(ofMinutes(1));
            clock.advance(ofSeconds(59));
            assertThat(admitUntilRejected(fivePerMinute)).isEqualTo(5);

            clock.advance(ofSeconds(1));
            assertThat(admitUntilRejected(fivePerMinute)).isEqualTo(5);
        }
    }

    @Nested
    @DisplayName("SLIDING_WINDOW")
    class SlidingWindow {

        @BeforeEach
        void supported() {
            assumeSupported(SLIDING_WINDOW);
        }

        @Test
        @DisplayName("limit 40: 30 in the previous window, 5 in this one; 41% in, exactly 17 more fit")
        void workedExampleFromTheDesign() {
            Tier tier = Tier.of(40, ofMinutes(1), SLIDING_WINDOW);
            clock.alignTo(ofMinutes(1));
            Instant windowStart = clock.instant();

            clock.set(windowStart.minus(ofSeconds(50)));
            for (int i = 0; i < 30; i++) {
                assertThat(acquire(tier).allowed()).isTrue();
            }
            clock.set(windowStart);
            for (int i = 0; i < 5; i++) {
                assertThat(acquire(tier).allowed()).isTrue();
            }

            // 41% into the window: ceil(0.59 × 30 + 5) = 23 counted, so 17 fit.
            clock.set(windowStart.plusMillis(24_600));
            for (int remaining = 16; remaining >= 0; remaining--) {
                assertThat(acquire(tier)).isEqualTo(admitted(tier, remaining, 35_400 + 60_000));
            }
            // ceil(30 × (1 - e/60s)) + 22 + 1 <= 40 once e reaches 26 s.
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 95_400, 1_400));
            clock.advanceMillis(1_399);
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 94_001, 1));
            clock.advanceMillis(1);
            assertThat(acquire(tier)).isEqualTo(admitted(tier, 0, 94_000));
        }

        @Test
        void isExactWhenThePreviousWindowIsEmpty() {
            Tier tier = Tier.of(10, ofMinutes(1), SLIDING_WINDOW);
            clock.alignTo(ofMinutes(1));
            clock.advance(ofSeconds(30));

            assertThat(admitUntilRejected(tier)).isEqualTo(10);
            // Next window, 6 s in: ceil(10 × 54/60) + 1 = 10 fits.
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 90_000, 36_000));
            clock.advanceMillis(35_999);
            assertThat(acquire(tier).allowed()).isFalse();
            clock.advanceMillis(1);
            assertThat(acquire(tier)).isEqualTo(admitted(tier, 0, 114_000));
        }

        @Test
        void forgetsAWindowOnceAWholeWindowHasPassedSinceItEnded() {
            Tier tier = Tier.of(10, ofMinutes(1), SLIDING_WINDOW);
            clock.alignTo(ofMinutes(1));
            assertThat(admitUntilRejected(tier)).isEqualTo(10);

            clock.advance(ofMinutes(2));
            assertThat(acquire(tier)).isEqualTo(admitted(tier, 9, 120_000));
        }
    }

    @Nested
    @DisplayName("SLIDING_LOG")
    class SlidingLog {

        private final Tier threePerSecond = Tier.of(3, ofSeconds(1), SLIDING_LOG);

        @BeforeEach
        void supported() {
            assumeSupported(SLIDING_LOG);
        }

        @Test
        void anEntryExactlyOneWindowOldNoLongerCounts() {
            assertThat(acquire(threePerSecond)).isEqualTo(admitted(threePerSecond, 2, 1_000));
            clock.advanceMillis(100);
            assertThat(acquire(threePerSecond)).isEqualTo(admitted(threePerSecond, 1, 1_000));
            clock.advanceMillis(100);
            assertThat(acquire(threePerSecond)).isEqualTo(admitted(threePerSecond, 0, 1_000));

            clock.advanceMillis(799);
            assertThat(acquire(threePerSecond)).isEqualTo(rejected(threePerSecond, 0, 201, 1));
            clock.advanceMillis(1);
            assertThat(acquire(threePerSecond)).isEqualTo(admitted(threePerSecond, 0, 1_000));
            assertThat(acquire(threePerSecond)).isEqualTo(rejected(threePerSecond, 0, 1_000, 100));
        }

        @Test
        void countsAPermitTakenWhileTheClockWasSetBackAtTheLatestTime() {
            Tier twoPerSecond = Tier.of(2, ofSeconds(1), SLIDING_LOG);
            Instant latest = clock.instant();
            acquire(twoPerSecond);
            clock.set(latest.minusMillis(500));
            assertThat(acquire(twoPerSecond).allowed()).isTrue();

            clock.set(latest.plusMillis(600));
            assertThat(acquire(twoPerSecond).allowed()).as("both permits were taken at the latest time").isFalse();
        }

        @Test
        void slidesWithTheCallsNotWithTheEpoch() {
            clock.alignTo(ofSeconds(1));
            clock.advanceMillis(900);
            assertThat(admitUntilRejected(threePerSecond)).isEqualTo(3);

            clock.advanceMillis(200);
            assertThat(acquire(threePerSecond)).isEqualTo(rejected(threePerSecond, 0, 800, 800));
        }

        @Test
        void keepsEveryPermitOfACallDistinctWithinOneMillisecond() {
            Tier tier = Tier.of(100, ofSeconds(1), SLIDING_LOG);
            for (int i = 0; i < 20; i++) {
                assertThat(acquire(5, tier).allowed()).isTrue();
            }
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 1_000, 1_000));
        }
    }

    @Nested
    @DisplayName("TOKEN_BUCKET")
    class TokenBucket {

        private final Tier tenPerSecond = Tier.of(10, ofSeconds(1), TOKEN_BUCKET);

        @BeforeEach
        void supported() {
            assumeSupported(TOKEN_BUCKET);
        }

        @Test
        @DisplayName("capacity 10 at 10/s: cost 6 leaves 4, 200 ms later cost 5 leaves 1, 900 ms later it is full")
        void workedExampleFromTheDesign() {
            clock.advanceMillis(300);
            assertThat(acquire(6, tenPerSecond)).isEqualTo(admitted(tenPerSecond, 4, 600));
            clock.advanceMillis(200);
            assertThat(acquire(5, tenPerSecond)).isEqualTo(admitted(tenPerSecond, 1, 900));

            clock.advanceMillis(899);
            assertThat(acquire(10, tenPerSecond)).isEqualTo(rejected(tenPerSecond, 9, 1, 1));
            clock.advanceMillis(1);
            // 1 + 9 refilled tokens make exactly 10.
            assertThat(acquire(10, tenPerSecond)).isEqualTo(admitted(tenPerSecond, 0, 1_000));
        }

        @Test
        void aNewBucketStartsFullAndRefillsEvenly() {
            assertThat(admitUntilRejected(tenPerSecond)).isEqualTo(10);
            assertThat(acquire(tenPerSecond)).isEqualTo(rejected(tenPerSecond, 0, 1_000, 100));

            clock.advanceMillis(99);
            assertThat(acquire(tenPerSecond).allowed()).isFalse();
            clock.advanceMillis(1);
            assertThat(acquire(tenPerSecond)).isEqualTo(admitted(tenPerSecond, 0, 1_000));
        }

        @Test
        void holdsNoMoreThanItsCapacity() {
            acquire(tenPerSecond);
            clock.advance(ofDays(3));
            assertThat(admitUntilRejected(tenPerSecond)).isEqualTo(10);
        }

        @Test
        void refillsAtLimitPerWindowEvenWhenThatIsNotAWholeNumberPerMillisecond() {
            Tier threePerSevenSeconds = Tier.of(3, ofSeconds(7), TOKEN_BUCKET);
            assertThat(admitUntilRejected(threePerSevenSeconds)).isEqualTo(3);
            // One token takes 7000 / 3 = 2333.3 ms: 2334 whole milliseconds.
            assertThat(acquire(threePerSevenSeconds)).isEqualTo(rejected(threePerSevenSeconds, 0, 7_000, 2_334));
            clock.advanceMillis(2_333);
            assertThat(acquire(threePerSevenSeconds).allowed()).isFalse();
            clock.advanceMillis(1);
            // 2334 ms refilled 7002 of 7000 units a token: the spare 2 units shorten nothing.
            assertThat(acquire(threePerSevenSeconds)).isEqualTo(admitted(threePerSevenSeconds, 0, 7_000));
        }
    }

    // ---------------------------------------------------------------- reservations

    /**
     * {@link RateLimitStore#reserve}: a store that reserves token buckets takes a waiting caller's
     * permit at once, due later; one that does not decides now, as {@code tryAcquire}.
     */
    @Nested
    @DisplayName("CONCURRENCY")
    class ConcurrencyTier {

        /** Its lease outlasts every test, whose clock a store that counts leases in it may follow. */
        private final Tier twoAtOnce = Tier.concurrency(2, ofHours(1));

        @BeforeEach
        void supported() {
            assumeSupported(Algorithm.CONCURRENCY);
        }

        @Test
        void admitsTheLimitHeldAtOnceAndAnotherOnceOneIsGivenBack() {
            Decision first = acquire(twoAtOnce);
            assertThat(first.allowed()).isTrue();
            assertThat(first.remaining()).isEqualTo(1);
            assertThat(first.concurrency()).as("bound by a concurrency tier").isTrue();
            assertThat(first.window()).as("which has no window").isZero();
            assertThat(acquire(twoAtOnce).remaining()).isZero();
            Decision full = acquire(twoAtOnce);
            assertThat(full.allowed()).isFalse();
            assertThat(full.concurrency()).isTrue();
            assertThat(full.remaining()).isZero();
            assertThat(full.limit()).isEqualTo(2);
            assertThat(full.retryAfter()).as("a wait the store cannot know, but positive").isPositive();

            store.giveBack(key, List.of(twoAtOnce), 1, Duration.ZERO);
            assertThat(acquire(twoAtOnce).allowed()).isTrue();
            assertThat(acquire(twoAtOnce).allowed()).isFalse();
        }

        @Test
        void givingBackWhatIsNotHeldNeverMakesRoomForMore() {
            store.giveBack(key, List.of(twoAtOnce), 1, Duration.ZERO);
            assertThat(acquire(twoAtOnce).allowed()).isTrue();
            store.giveBack(key, List.of(twoAtOnce), 1, Duration.ZERO);
            store.giveBack(key, List.of(twoAtOnce), 1, Duration.ZERO);
            assertThat(admitUntilRejected(twoAtOnce)).isEqualTo(2);
        }

        @Test
        void aCallTakesItsCostInPermits() {
            Tier three = Tier.concurrency(3, ofHours(1));
            assertThat(acquire(2, three).remaining()).isEqualTo(1);
            assertThat(acquire(2, three).allowed()).isFalse();
            store.giveBack(key, List.of(three), 2, Duration.ZERO);
            assertThat(acquire(3, three).allowed()).isTrue();
        }

        @Test
        void everyConcurrencyTierOfAKeyCountsTheSamePermitsWhateverItsLease() {
            assertThat(admitUntilRejected(twoAtOnce)).isEqualTo(2);
            Tier otherLease = Tier.concurrency(3, ofHours(2));
            assertThat(acquire(otherLease).allowed()).as("a third permit, under a limit of 3").isTrue();
            assertThat(acquire(otherLease).allowed()).isFalse();
        }

        @Test
        void isDecidedWithRateTiersAtomically() {
            Tier onePerMinute = Tier.of(1, ofMinutes(1), Algorithm.FIXED_WINDOW);
            clock.alignTo(ofMinutes(1));
            assertThat(acquire(twoAtOnce, onePerMinute).allowed()).isTrue();
            assertThat(acquire(twoAtOnce, onePerMinute).allowed()).as("the rate rejects").isFalse();
            assertThat(acquire(twoAtOnce).remaining()).as("the rejected call held no permit").isZero();

            clock.advance(ofMinutes(1));
            Decision full = acquire(twoAtOnce, onePerMinute);
            assertThat(full.allowed()).as("no permit free").isFalse();
            assertThat(full.limit()).as("the binding tier").isEqualTo(2);
            store.giveBack(key, List.of(twoAtOnce), 1, Duration.ZERO);
            assertThat(acquire(twoAtOnce, onePerMinute).allowed()).as("the rejected call counted in no rate tier")
                    .isTrue();
        }

        @Test
        void neverAdmitsMoreThanTheLimitAtOnceUnderContention() throws Exception {
            int threads = 8;
            int callsPerThread = 200;
            AtomicInteger running = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            AtomicInteger admittedCalls = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    done.add(pool.submit(() -> {
                        go.await();
                        for (int i = 0; i < callsPerThread; i++) {
                            if (acquire(twoAtOnce).allowed()) {
                                admittedCalls.incrementAndGet();
                                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                                running.decrementAndGet();
                                store.giveBack(key, List.of(twoAtOnce), 1, Duration.ZERO);
                            }
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> future : done) {
                    future.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(most.get()).as("calls holding a permit at once").isLessThanOrEqualTo(2);
            assertThat(admittedCalls.get()).as("calls admitted").isPositive();
            assertThat(admitUntilRejected(twoAtOnce)).as("every permit given back").isEqualTo(2);
        }
    }

    @Nested
    class Reservations {

        private final Tier tenPerSecond = Tier.of(10, ofSeconds(1), TOKEN_BUCKET);

        private Reservation reserve(long cost, long maxWaitMillis, Tier... tiers) {
            return store.reserve(key, List.of(tiers), cost, ofMillis(maxWaitMillis));
        }

        private void assumeReserved(Tier tier) {
            assumeSupported(tier);
            assumeTrue(store.reserves(tier), () -> store.getClass().getSimpleName() + " does not reserve " + tier);
        }

        @Test
        void aCallThatFitsNowIsAdmittedAsTryAcquireAdmitsIt() {
            assumeSupported(tenPerSecond);
            assertThat(reserve(3, 1_000, tenPerSecond)).isEqualTo(Reservation.now(admitted(tenPerSecond, 7, 300)));
        }

        @Test
        void waitingCallersAreGivenPermitsDueOneAfterAnotherWhichNobodyTakesFromThem() {
            assumeReserved(tenPerSecond);
            assertThat(admitUntilRejected(tenPerSecond)).isEqualTo(10);

            assertThat(reserve(1, 1_000, tenPerSecond)).isEqualTo(new Reservation(admitted(tenPerSecond, 0, 1_100),
                    ofMillis(100)));
            assertThat(reserve(1, 1_000, tenPerSecond).delay()).isEqualTo(ofMillis(200));
            assertThat(reserve(3, 1_000, tenPerSecond).delay()).as("a cost is reserved whole").isEqualTo(ofMillis(500));
            // The reserved permits are not there for a caller that does not wait.
            assertThat(acquire(tenPerSecond)).isEqualTo(rejected(tenPerSecond, 0, 1_500, 600));
            clock.advanceMillis(599);
            assertThat(acquire(tenPerSecond).allowed()).isFalse();
            clock.advanceMillis(1);
            assertThat(acquire(tenPerSecond)).isEqualTo(admitted(tenPerSecond, 0, 1_000));
        }

        @Test
        void aCallThatWouldWaitLongerThanItsCallerIsRejectedAndTakesNothing() {
            assumeReserved(tenPerSecond);
            admitUntilRejected(tenPerSecond);

            assertThat(reserve(2, 199, tenPerSecond)).isEqualTo(Reservation.now(rejected(tenPerSecond, 0, 1_000, 200)));
            assertThat(reserve(2, 200, tenPerSecond).delay()).isEqualTo(ofMillis(200));
        }

        @Test
        void noWaitDecidesNow() {
            assumeReserved(tenPerSecond);
            admitUntilRejected(tenPerSecond);
            assertThat(reserve(1, 0, tenPerSecond)).isEqualTo(Reservation.now(rejected(tenPerSecond, 0, 1_000, 100)));
            assertThat(reserve(1, 100, tenPerSecond).delay()).as("nothing was taken").isEqualTo(ofMillis(100));
        }

        @Test
        void everyTokenBucketTierReservesTheCallWhichIsDueWhenTheSlowestLetsItIn() {
            Tier fivePerTenSeconds = Tier.of(5, ofSeconds(10), TOKEN_BUCKET);
            assumeReserved(tenPerSecond);
            assumeSupported(fivePerTenSeconds);
            assertThat(admitUntilRejected(tenPerSecond, fivePerTenSeconds)).isEqualTo(5);

            // The fast bucket has 5 tokens left; the slow one refills one every 2 s.
            assertThat(reserve(1, 5_000, tenPerSecond, fivePerTenSeconds)).isEqualTo(new Reservation(
                    admitted(fivePerTenSeconds, 0, 12_000), ofMillis(2_000)));
            assertThat(reserve(1, 5_000, tenPerSecond, fivePerTenSeconds).delay()).isEqualTo(ofMillis(4_000));
            assertThat(reserve(1, 5_000, tenPerSecond, fivePerTenSeconds).decision().allowed()).isFalse();
            assertThat(acquire(tenPerSecond)).as("the fast bucket counted both reservations")
                    .isEqualTo(admitted(tenPerSecond, 2, 800));
        }

        @Test
        void callsWithAWindowTierAreDecidedNow() {
            Tier fixed = Tier.of(10, ofSeconds(1), FIXED_WINDOW);
            assumeSupported(tenPerSecond);
            assumeSupported(fixed);
            admitUntilRejected(tenPerSecond, fixed);
            assertThat(reserve(1, 5_000, tenPerSecond, fixed).decision().allowed()).isFalse();
            assertThat(reserve(1, 5_000, fixed).decision().allowed()).isFalse();
        }

        @Test
        void aBlockedKeyIsNotReserved() {
            Tier blocking = tenPerSecond.withBlockFor(ofSeconds(3));
            assumeReserved(blocking);
            admitUntilRejected(blocking);
            assertThat(reserve(1, 5_000, blocking)).isEqualTo(Reservation.now(rejected(blocking, 0, 3_000, 3_000)));
        }

        @Test
        void aBucketOwingManyWindowsRefillsAtItsRateAndThenHoldsItsCapacity() {
            assumeReserved(tenPerSecond);
            admitUntilRejected(tenPerSecond);
            Reservation last = null;
            for (int i = 0; i < 50; i++) {
                last = reserve(1, 5_000, tenPerSecond);
            }
            assertThat(last.delay()).isEqualTo(ofSeconds(5));
            assertThat(reserve(1, 5_000, tenPerSecond).decision().allowed()).isFalse();

            clock.advanceMillis(5_000);
            assertThat(acquire(tenPerSecond)).as("the last reserved permit came due, no more")
                    .isEqualTo(rejected(tenPerSecond, 0, 1_000, 100));
            clock.advanceMillis(1_000);
            assertThat(admitUntilRejected(tenPerSecond)).isEqualTo(10);
            clock.advance(ofDays(3));
            assertThat(admitUntilRejected(tenPerSecond)).isEqualTo(10);
        }

        @Test
        void aCountedRejectionNeverLessensTheDebtOfReservations() {
            Tier counting = tenPerSecond.withCountRejected();
            assumeReserved(counting);
            admitUntilRejected(counting);
            for (int i = 0; i < 30; i++) {
                reserve(1, 5_000, counting);
            }
            // 10 taken, 1 counted rejection, 30 reserved: the bucket misses 41 tokens, 4.1 s of refill;
            // a counted rejection runs a bucket at most one more full bucket into debt, so this one adds none.
            assertThat(acquire(counting)).isEqualTo(rejected(counting, 0, 4_100, 3_200));
        }

        @Test
        void reservesAsynchronouslyAsItReservesSynchronously() {
            assumeReserved(tenPerSecond);
            admitUntilRejected(tenPerSecond);
            assertThat(store.reserveAsync(key, List.of(tenPerSecond), 1, ofSeconds(1)).toCompletableFuture().join())
                    .isEqualTo(new Reservation(admitted(tenPerSecond, 0, 1_100), ofMillis(100)));
        }

        @Test
        void refusesANegativeWait() {
            assumeSupported(tenPerSecond);
            assertThatThrownBy(() -> store.reserve(key, List.of(tenPerSecond), 1, ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    // ---------------------------------------------------------------- figures, per algorithm

    @Nested
    class Decisions {

        @ParameterizedTest
        @RateAlgorithms
        void remainingCountsDownToZeroAndTheLimitIsTheTiers(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(4, ofSeconds(10), algorithm);
            clock.alignTo(ofSeconds(10));

            for (int remaining = 3; remaining >= 0; remaining--) {
                Decision decision = acquire(tier);
                assertThat(decision.allowed()).isTrue();
                assertThat(decision.limit()).isEqualTo(4);
                assertThat(decision.remaining()).isEqualTo(remaining);
                assertThat(decision.retryAfter()).isZero();
            }
            Decision rejection = acquire(tier);
            assertThat(rejection.allowed()).isFalse();
            assertThat(rejection.limit()).isEqualTo(4);
            assertThat(rejection.remaining()).isZero();
            assertThat(rejection.retryAfter()).isPositive();
        }

        @ParameterizedTest
        @RateAlgorithms
        void retryAfterIsTheShortestWaitAfterWhichTheSameCallPasses(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(5, ofSeconds(1), algorithm);
            clock.alignTo(ofSeconds(1));
            clock.advanceMillis(123);
            Decision decision = acquire(2, tier);
            for (int calls = 1; decision.allowed(); calls++) {
                assertThat(calls).as("calls admitted without a rejection").isLessThan(100);
                clock.advanceMillis(170);
                decision = acquire(2, tier);
            }

            long retryAfter = decision.retryAfter().toMillis();
            clock.advanceMillis(retryAfter - 1);
            assertThat(acquire(2, tier).allowed()).as("one millisecond before retryAfter").isFalse();
            clock.advanceMillis(1);
            assertThat(acquire(2, tier).allowed()).as("at retryAfter").isTrue();
        }

        @ParameterizedTest
        @RateAlgorithms
        void resetAfterIsWhenTheTierIsBackToItsFullLimit(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(5, ofSeconds(1), algorithm);
            clock.alignTo(ofSeconds(1));
            clock.advanceMillis(400);
            acquire(2, tier);
            clock.advanceMillis(250);
            Decision decision = acquire(tier);

            long resetAfter = decision.resetAfter().toMillis();
            assertThat(resetAfter).isPositive();
            clock.advanceMillis(resetAfter - 1);
            assertThat(acquire(5, tier).allowed()).as("the full limit one millisecond before resetAfter").isFalse();
            clock.advanceMillis(1);
            assertThat(acquire(5, tier)).as("the full limit at resetAfter").isEqualTo(admitted(tier, 0,
                    acquire5ResetAfter(algorithm)));
        }

        private long acquire5ResetAfter(Algorithm algorithm) {
            long intoWindow = Math.floorMod(clock.instant().toEpochMilli(), 1_000);
            return switch (algorithm) {
                case FIXED_WINDOW -> 1_000 - intoWindow;
                case SLIDING_WINDOW -> 2_000 - intoWindow;
                case SLIDING_LOG, TOKEN_BUCKET -> 1_000;
                case CONCURRENCY -> throw new IllegalArgumentException("not a rate: " + algorithm);
            };
        }

        @ParameterizedTest
        @RateAlgorithms
        void aClockSetBackDecidesAtTheLatestTimeTheKeySaw(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier twoPerSecond = Tier.of(2, ofSeconds(1), algorithm);
            clock.alignTo(ofSeconds(1));
            clock.advanceMillis(100);
            Instant latest = clock.instant();
            acquire(twoPerSecond);
            acquire(twoPerSecond);

            clock.set(latest.minusMillis(500));
            assertThat(acquire(twoPerSecond).allowed()).as("half a second earlier, in the previous window").isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aChangedLimitKeepsTheCounts(Algorithm algorithm) {
            assumeSupported(algorithm);
            clock.alignTo(ofMinutes(1));
            assertThat(acquire(3, Tier.of(5, ofMinutes(1), algorithm)).allowed()).isTrue();

            Tier raised = Tier.of(6, ofMinutes(1), algorithm);
            assertThat(acquire(3, raised)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
            assertThat(acquire(raised).allowed()).isFalse();
        }
    }

    // ---------------------------------------------------------------- tiers and options

    @Nested
    class Tiers {

        @ParameterizedTest
        @RateAlgorithms
        void aTierKeepsItsCountsWhileCallsWithOtherTiersComeBetween(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier perMinute = Tier.of(3, ofMinutes(1), algorithm);
            Tier perHour = Tier.of(10, Duration.ofHours(1), algorithm);
            clock.alignTo(Duration.ofHours(1));

            assertThat(admitUntilRejected(perMinute)).isEqualTo(3);
            assertThat(acquire(perHour).allowed()).isTrue();
            assertThat(acquire(perMinute).allowed()).as("the per-minute tier after a call without it").isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aRejectionBindsTheTierWithTheLongestWait(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier twoPerSecond = Tier.of(2, ofSeconds(1), algorithm);
            Tier threePerMinute = Tier.of(3, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));
            acquire(2, twoPerSecond, threePerMinute);

            // Both tiers reject a call of 2: the per-minute one waits longer, so it binds.
            Decision rejected = acquire(2, twoPerSecond, threePerMinute);
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.limit()).isEqualTo(3);
            assertThat(rejected.window()).isEqualTo(ofMinutes(1));
            assertThat(rejected.remaining()).isEqualTo(1);
            assertThat(rejected.retryAfter()).isGreaterThan(ofSeconds(2));
            assertThat(rejected.resetAfter()).isGreaterThanOrEqualTo(rejected.retryAfter());
        }

        @ParameterizedTest
        @RateAlgorithms
        void aCallRejectedByOneTierIsCountedByNone(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier threePerSecond = Tier.of(3, ofSeconds(1), algorithm);
            Tier fivePerMinute = Tier.of(5, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            assertThat(admitUntilRejected(threePerSecond, fivePerMinute)).isEqualTo(3);
            assertThat(acquire(threePerSecond, fivePerMinute).allowed()).isFalse();

            clock.advance(ofSeconds(2));
            assertThat(admitUntilRejected(threePerSecond, fivePerMinute))
                    .as("the per-minute tier counted only the 3 admitted calls").isEqualTo(2);
        }

        @ParameterizedTest
        @RateAlgorithms
        void theBindingTierIsTheTightestWhenAdmittedAndTheLongestWaitWhenRejected(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier twoPerSecond = Tier.of(2, ofSeconds(1), algorithm);
            Tier threePerMinute = Tier.of(3, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            assertThat(acquire(twoPerSecond, threePerMinute)).extracting(Decision::limit, Decision::remaining,
                    Decision::window).containsExactly(2L, 1L, ofSeconds(1));
            acquire(twoPerSecond, threePerMinute);
            Decision rejectedBySecond = acquire(twoPerSecond, threePerMinute);
            assertThat(rejectedBySecond.allowed()).isFalse();
            assertThat(rejectedBySecond.limit()).isEqualTo(2);
            assertThat(rejectedBySecond.window()).isEqualTo(ofSeconds(1));
            assertThat(rejectedBySecond.retryAfter()).isLessThan(ofSeconds(2));

            clock.advance(rejectedBySecond.retryAfter());
            assertThat(acquire(twoPerSecond, threePerMinute)).extracting(Decision::allowed, Decision::limit,
                    Decision::remaining, Decision::window).containsExactly(true, 3L, 0L, ofMinutes(1));

            Decision rejectedByMinute = acquire(twoPerSecond, threePerMinute);
            assertThat(rejectedByMinute.allowed()).isFalse();
            assertThat(rejectedByMinute.limit()).isEqualTo(3);
            assertThat(rejectedByMinute.window()).isEqualTo(ofMinutes(1));
            assertThat(rejectedByMinute.retryAfter()).isGreaterThan(ofSeconds(1));
        }

        @Test
        void tiersOfDifferentAlgorithmsAreDecidedTogether() {
            List<Tier> tiers = new ArrayList<>();
            int limit = 10;
            for (Algorithm algorithm : Algorithm.values()) {
                if (store.supportedAlgorithms().contains(algorithm) && algorithm != Algorithm.CONCURRENCY) {
                    tiers.add(Tier.of(limit++, ofMinutes(1), algorithm));
                }
            }
            clock.alignTo(ofMinutes(1));
            Tier[] all = tiers.toArray(Tier[]::new);

            assertThat(admitUntilRejected(all)).isEqualTo(10);
            assertThat(acquire(all).limit()).isEqualTo(10);
        }

        @ParameterizedTest
        @RateAlgorithms
        void countRejectedTiersCountCallsOtherTiersReject(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier twoPerSecond = Tier.of(2, ofSeconds(1), algorithm);
            Tier fivePerMinute = Tier.of(5, ofMinutes(1), algorithm).withCountRejected();
            assumeSupported(fivePerMinute);
            clock.alignTo(ofMinutes(1));

            assertThat(admitUntilRejected(twoPerSecond, fivePerMinute)).isEqualTo(2);
            acquire(twoPerSecond, fivePerMinute);
            acquire(twoPerSecond, fivePerMinute);

            clock.advance(ofSeconds(2));
            Decision decision = acquire(twoPerSecond, fivePerMinute);
            assertThat(decision.allowed()).as("5 calls counted per minute: 2 admitted, 3 rejected").isFalse();
            assertThat(decision.limit()).isEqualTo(5);
        }

        @ParameterizedTest
        @RateAlgorithms
        void onlyTiersWithCountRejectedCountRejectedCalls(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tenPerMinute = Tier.of(10, ofMinutes(1), algorithm);
            Tier twoPerHour = Tier.of(2, Duration.ofHours(1), algorithm).withCountRejected();
            assumeSupported(twoPerHour);
            clock.alignTo(Duration.ofHours(1));

            assertThat(admitUntilRejected(tenPerMinute, twoPerHour)).isEqualTo(2);
            acquire(tenPerMinute, twoPerHour);
            acquire(tenPerMinute, twoPerHour);
            assertThat(acquire(tenPerMinute)).extracting(Decision::allowed, Decision::remaining)
                    .as("the per-minute tier counted only the 2 admitted calls").containsExactly(true, 7L);
        }

        /** A fixed window forgets everything at its end, so its counted rejections show only across tiers. */
        @ParameterizedTest
        @EnumSource(value = Algorithm.class, names = {"SLIDING_WINDOW", "SLIDING_LOG", "TOKEN_BUCKET"})
        void countRejectedKeepsAHammeringCallerLimited(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier counting = Tier.of(3, ofSeconds(10), algorithm).withCountRejected();
            assumeSupported(counting);
            Tier plain = Tier.of(3, ofSeconds(10), algorithm);
            String plainKey = key + ":plain";
            clock.alignTo(ofSeconds(10));

            for (int i = 0; i < 8; i++) {
                acquire(counting);
                store.tryAcquire(plainKey, List.of(plain), 1);
                clock.advanceMillis(1_000);
            }
            long plainWait = store.tryAcquire(plainKey, List.of(plain), 1).retryAfter().toMillis();
            long countingWait = acquire(counting).retryAfter().toMillis();
            assertThat(countingWait).as("wait after hammering, counting rejections vs not")
                    .isGreaterThan(plainWait);
        }
    }

    @Nested
    class Cost {

        @ParameterizedTest
        @RateAlgorithms
        void aCallTakesItsCostAndCostEqualToWhatIsLeftFits(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(5, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            assertThat(acquire(2, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 3L);
            assertThat(acquire(3, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
            assertThat(acquire(tier).allowed()).isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aCallCostingMoreThanIsLeftIsRejectedAndTakesNothing(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(5, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            acquire(3, tier);
            assertThat(acquire(3, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(false, 2L);
            assertThat(acquire(2, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
        }

        @ParameterizedTest
        @RateAlgorithms
        void theWholeLimitFitsInOneCall(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(7, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            assertThat(acquire(7, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
        }

        @ParameterizedTest
        @RateAlgorithms
        void theLargestFiguresATierMayHaveAreExact(Algorithm algorithm) {
            // limit × window at its bound, 2^52 permits in a millisecond: every figure kept and reported stays exact.
            Tier tier = Tier.of(Tier.MAX_LIMIT_TIMES_WINDOW_MILLIS, ofMillis(1), algorithm);
            assumeSupported(tier);

            assertThat(acquire(tier.limit() - 1, tier)).extracting(Decision::allowed, Decision::remaining)
                    .containsExactly(true, 1L);
            assertThat(acquire(2, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(false, 1L);
            assertThat(acquire(1, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aCountedRejectionAtTheLargestFiguresTakesWhatIsLeft(Algorithm algorithm) {
            Tier tier = Tier.of(Tier.MAX_LIMIT_TIMES_WINDOW_MILLIS, ofMillis(1), algorithm).withCountRejected();
            assumeSupported(tier);

            assertThat(acquire(tier.limit() - 1, tier).allowed()).isTrue();
            assertThat(acquire(2, tier).allowed()).isFalse();
            assertThat(acquire(1, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(false, 0L);
        }

        @ParameterizedTest
        @RateAlgorithms
        void theLongestWindowAndBlockATierMayHaveWork(Algorithm algorithm) {
            Duration longest = ofMillis(Tier.MAX_LIMIT_TIMES_WINDOW_MILLIS);
            Tier tier = Tier.of(1, longest, algorithm).withBlockFor(longest);
            assumeSupported(tier);

            assertThat(acquire(tier).allowed()).isTrue();
            Decision rejected = acquire(tier);
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.retryAfter()).isGreaterThanOrEqualTo(longest.minusDays(1));
            clock.advance(ofDays(365));
            assertThat(acquire(tier).allowed()).as("a year later, still blocked").isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void countedRejectionsCountAtMostOneMoreWindowsWorth(Algorithm algorithm) {
            Tier tier = Tier.of(1_000, ofMinutes(1), algorithm).withCountRejected();
            assumeSupported(tier);
            clock.alignTo(ofMinutes(1));
            String hammered = key + ":hammered";
            for (String each : List.of(key, hammered)) {
                assertThat(store.tryAcquire(each, List.of(tier), 1_000).allowed()).isTrue();
                assertThat(store.tryAcquire(each, List.of(tier), 1_000).allowed()).isFalse();
            }
            // Fifty more windows' worth count no more than one: counts stay bounded, never overflow.
            for (int i = 0; i < 50; i++) {
                assertThat(store.tryAcquire(hammered, List.of(tier), 1_000).allowed()).isFalse();
            }
            for (int step = 0; step < 6; step++) {
                clock.advance(ofSeconds(25));
                assertThat(store.tryAcquire(hammered, List.of(tier), 1)).as("%d s later", 25 * (step + 1))
                        .isEqualTo(store.tryAcquire(key, List.of(tier), 1));
            }
        }

        @Test
        void aSlidingLogCallOfAnyCostIsOneEntryWithExactFigures() {
            Tier tier = Tier.of(1_000_000, ofMinutes(1), SLIDING_LOG);
            assumeSupported(tier);
            assertThat(acquire(999_999, tier)).isEqualTo(admitted(tier, 1, 60_000));
            clock.advanceMillis(10);
            assertThat(acquire(tier)).isEqualTo(admitted(tier, 0, 60_000));
            assertThat(acquire(2, tier)).isEqualTo(rejected(tier, 0, 60_000, 59_990));

            clock.advanceMillis(59_990);
            assertThat(acquire(1_000_000, tier)).as("the first call left the window, the second not yet")
                    .isEqualTo(rejected(tier, 999_999, 10, 10));
            assertThat(acquire(999_999, tier)).isEqualTo(admitted(tier, 0, 60_000));
        }
    }

    @Nested
    class ChangedLimits {

        @ParameterizedTest
        @RateAlgorithms
        void flippingBetweenTwoLimitsNeverAdmitsMoreThanTheLarger(Algorithm algorithm) {
            assumeSupported(algorithm);
            clock.alignTo(ofHours(1));
            Tier low = Tier.of(100, ofHours(1), algorithm);
            Tier high = Tier.of(200, ofHours(1), algorithm);

            // Two instances of an application, deployed with different limits, call in turn.
            int admitted = 0;
            for (int i = 0; i < 2_000; i++) {
                if (acquire(i % 2 == 0 ? low : high).allowed()) {
                    admitted++;
                }
            }
            assertThat(admitted).isLessThanOrEqualTo(200);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aLoweredLimitHoldsNoMoreThanItsFigure(Algorithm algorithm) {
            assumeSupported(algorithm);
            clock.alignTo(ofHours(1));
            acquire(Tier.of(200, ofHours(1), algorithm));

            assertThat(admitUntilRejected(Tier.of(100, ofHours(1), algorithm))).isEqualTo(99);
        }
    }

    /**
     * A {@link RateLimiter} on the store under test, whose tiers change while it runs and whose
     * calls name plans: counts are the key's, whatever tiers decide the next call.
     */
    @Nested
    class LiveChangesAndPlans {

        private RateLimiter limiter(Algorithm algorithm, long limit) {
            return RateLimiter.builder().name("live").store(store).clock(clock)
                    .tier(Tier.of(limit, ofHours(1), algorithm))
                    .plan("pro", List.of(Tier.of(limit * 2, ofHours(1), algorithm)))
                    .build();
        }

        private int admitUntilRejected(RateLimiter limiter, @Nullable String plan) {
            int admitted = 0;
            while (limiter.tryAcquire(key, 1, plan).allowed()) {
                admitted++;
                assertThat(admitted).as("calls admitted without a rejection").isLessThan(100_000);
            }
            return admitted;
        }

        @ParameterizedTest
        @RateAlgorithms
        void aLimitRaisedMidWindowAdmitsTheDifference(Algorithm algorithm) {
            assumeSupported(algorithm);
            clock.alignTo(ofHours(1));
            RateLimiter limiter = limiter(algorithm, 10);
            assertThat(admitUntilRejected(limiter, null)).isEqualTo(10);

            limiter.changeTiers(List.of(Tier.of(15, ofHours(1), algorithm)));
            assertThat(limiter.tiers()).containsExactly(Tier.of(15, ofHours(1), algorithm));
            assertThat(admitUntilRejected(limiter, null)).as("after the raise, in the same window").isEqualTo(5);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aLimitLoweredMidWindowAdmitsNoMoreThanItsFigure(Algorithm algorithm) {
            assumeSupported(algorithm);
            clock.alignTo(ofHours(1));
            RateLimiter limiter = limiter(algorithm, 10);
            for (int i = 0; i < 6; i++) {
                assertThat(limiter.tryAcquire(key).allowed()).isTrue();
            }

            limiter.changeTiers(List.of(Tier.of(8, ofHours(1), algorithm)));
            assertThat(admitUntilRejected(limiter, null)).as("after lowering 10 to 8, 6 used").isEqualTo(2);
            limiter.changeTiers(List.of(Tier.of(4, ofHours(1), algorithm)));
            assertThat(admitUntilRejected(limiter, null)).as("lowered below what was used").isZero();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aKeyUpgradedMidWindowKeepsWhatItUsedAndGetsTheDifference(Algorithm algorithm) {
            assumeSupported(algorithm);
            clock.alignTo(ofHours(1));
            RateLimiter limiter = limiter(algorithm, 10);
            assertThat(admitUntilRejected(limiter, null)).as("the default plan").isEqualTo(10);

            assertThat(admitUntilRejected(limiter, "pro")).as("upgraded to 20 an hour, 10 used").isEqualTo(10);
            assertThat(limiter.tryAcquire(key, 1, null).allowed()).as("downgraded again").isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aPlanChangedLiveDecidesTheNextCallOfThatPlanAndAnUnknownPlanTakesTheDefaultTiers(Algorithm algorithm) {
            assumeSupported(algorithm);
            clock.alignTo(ofHours(1));
            RateLimiter limiter = limiter(algorithm, 10);
            assertThat(admitUntilRejected(limiter, "unheard-of")).as("an unknown plan: the default tiers")
                    .isEqualTo(10);

            limiter.changeTiers("pro", List.of(Tier.of(12, ofHours(1), algorithm)));
            assertThat(admitUntilRejected(limiter, "pro")).isEqualTo(2);
            limiter.changePlans(Map.of("enterprise", List.of(Tier.of(13, ofHours(1), algorithm))));
            assertThat(limiter.plans()).containsOnlyKeys("enterprise");
            assertThat(admitUntilRejected(limiter, "pro")).as("a removed plan: the default tiers").isZero();
            assertThat(admitUntilRejected(limiter, "enterprise")).isEqualTo(1);
        }
    }

    @Nested
    class BlockFor {

        @ParameterizedTest
        @RateAlgorithms
        void aRejectionBlocksTheKeyForTheWholeBlockAndCallsDuringItDoNotExtendIt(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(3, ofMinutes(1), algorithm).withBlockFor(ofMinutes(15));
            assumeSupported(tier);
            clock.alignTo(ofMinutes(1));

            assertThat(admitUntilRejected(tier)).isEqualTo(3);
            clock.advance(ofMinutes(2));
            assertThat(acquire(tier)).as("2 minutes into the block, though the tier admits again")
                    .isEqualTo(rejected(tier, 0, ofMinutes(13).toMillis(), ofMinutes(13).toMillis()));
            clock.advance(ofMinutes(13).minusMillis(1));
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 1, 1));
            clock.advanceMillis(1);
            assertThat(acquire(tier).allowed()).isTrue();
        }

        @ParameterizedTest
        @RateAlgorithms
        void theRejectionThatStartsABlockWaitsForTheWholeBlock(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(2, ofMinutes(1), algorithm).withBlockFor(ofMinutes(15));
            assumeSupported(tier);
            clock.alignTo(ofMinutes(1));

            acquire(tier);
            acquire(tier);
            long block = ofMinutes(15).toMillis();
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, block, block));
        }

        @ParameterizedTest
        @RateAlgorithms
        void theLongestBlockOfTheRejectingTiersApplies(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier shortBlock = Tier.of(1, ofMinutes(1), algorithm).withBlockFor(ofMinutes(5));
            Tier longBlock = Tier.of(1, ofMinutes(2), algorithm).withBlockFor(ofMinutes(15));
            assumeSupported(shortBlock);
            clock.alignTo(ofMinutes(2));

            acquire(shortBlock, longBlock);
            assertThat(acquire(shortBlock, longBlock).retryAfter()).isEqualTo(ofMinutes(15));
        }

        @ParameterizedTest
        @RateAlgorithms
        void onlyARejectionByTheBlockingTierBlocks(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier twoPerSecond = Tier.of(2, ofSeconds(1), algorithm);
            Tier blocking = Tier.of(10, ofMinutes(1), algorithm).withBlockFor(ofMinutes(15));
            assumeSupported(blocking);
            clock.alignTo(ofMinutes(1));

            assertThat(admitUntilRejected(twoPerSecond, blocking)).isEqualTo(2);
            clock.advance(ofSeconds(2));
            assertThat(acquire(twoPerSecond, blocking).allowed()).isTrue();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aBlockCoversEveryTierOfTheKey(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier blocking = Tier.of(1, ofSeconds(1), algorithm).withBlockFor(ofHours());
            assumeSupported(blocking);
            Tier generous = Tier.of(1_000, ofMinutes(1), algorithm);
            acquire(blocking, generous);
            acquire(blocking, generous);

            clock.advance(ofMinutes(30));
            Decision decision = acquire(blocking, generous);
            assertThat(decision.allowed()).isFalse();
            assertThat(decision.remaining()).isZero();
            assertThat(decision.retryAfter()).isEqualTo(ofMinutes(30));
        }

        private Duration ofHours() {
            return Duration.ofHours(1);
        }
    }

    // ---------------------------------------------------------------- keys, concurrency, requests

    @Nested
    class Keys {

        @ParameterizedTest
        @RateAlgorithms
        void eachKeyHasItsOwnCounts(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            for (int i = 0; i < 200; i++) {
                String distinct = key + ":" + i;
                assertThat(store.tryAcquire(distinct, List.of(tier), 2).allowed()).isTrue();
                assertThat(store.tryAcquire(distinct, List.of(tier), 1).allowed()).isFalse();
            }
        }

        @Test
        void keysMayHoldAnyCharacters() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(1, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));
            List<String> keys = List.of("", "{", "}", "{a}", "a:b", " ", "ключ", "k".repeat(2_000), "*", "\n");

            for (String odd : keys) {
                assertThat(store.tryAcquire(key + odd, List.of(tier), 1).allowed()).as("key '%s'", odd).isTrue();
            }
            for (String odd : keys) {
                assertThat(store.tryAcquire(key + odd, List.of(tier), 1).allowed()).as("key '%s'", odd).isFalse();
            }
        }
    }

    @Nested
    class Concurrency {

        @ParameterizedTest
        @RateAlgorithms
        void manyThreadsOnOneKeyAdmitExactlyTheLimitEachSeeingADifferentRemaining(Algorithm algorithm)
                throws Exception {
            assumeSupported(algorithm);
            Tier tier = Tier.of(1_000, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            List<Decision> admitted = race(16, 150, List.of(tier));
            assertThat(admitted).hasSize(1_000);
            assertThat(admitted.stream().map(Decision::remaining).distinct()).hasSize(1_000);
        }

        @ParameterizedTest
        @RateAlgorithms
        void manyThreadsOnOneKeyKeepEveryTierExact(Algorithm algorithm) throws Exception {
            assumeSupported(algorithm);
            Tier perSecond = Tier.of(300, ofSeconds(1), algorithm);
            Tier perDay = Tier.of(1_000, ofDays(1), algorithm);
            clock.alignTo(ofDays(1));

            for (int round = 0; round < 3; round++) {
                assertThat(race(16, 50, List.of(perSecond, perDay))).hasSize(300);
                clock.advance(ofSeconds(2));
            }
            assertThat(race(16, 50, List.of(perSecond, perDay))).as("what the day has left").hasSize(100);
        }

        /** Starts the threads together; returns the admitting decisions. */
        private List<Decision> race(int threads, int callsPerThread, List<Tier> tiers) throws Exception {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<List<Decision>>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        go.await();
                        List<Decision> admitted = new ArrayList<>();
                        for (int i = 0; i < callsPerThread; i++) {
                            Decision decision = store.tryAcquire(key, tiers, 1);
                            if (decision.allowed()) {
                                admitted.add(decision);
                            }
                        }
                        return admitted;
                    }));
                }
                go.countDown();
                List<Decision> admitted = new ArrayList<>();
                for (Future<List<Decision>> result : results) {
                    admitted.addAll(result.get(2, TimeUnit.MINUTES));
                }
                return admitted;
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Nested
    class Requests {

        @Test
        void aRequestWithoutTiersIsRefused() {
            assertThatThrownBy(() -> store.tryAcquire(key, List.of(), 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tier");
        }

        @Test
        void twoTiersSharingAlgorithmAndWindowAreRefused() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier five = Tier.of(5, ofMinutes(1), algorithm);
            Tier ten = Tier.of(10, ofMinutes(1), algorithm);
            assertThatThrownBy(() -> acquire(five, ten))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share");
        }

        @Test
        void aCostBelowOneOrAboveTheSmallestLimitIsRefused() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(5, ofMinutes(1), algorithm);
            assertThatThrownBy(() -> acquire(0, tier)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost");
            assertThatThrownBy(() -> acquire(6, tier)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("never be admitted");
        }

        @TestFactory
        Stream<DynamicTest> unsupportedTiersAreRefusedByName() {
            return Stream.of(Algorithm.values())
                    .flatMap(algorithm -> algorithm == Algorithm.CONCURRENCY
                            ? Stream.of(Tier.concurrency(5, ofMinutes(1)))
                            : Stream.of(Tier.of(5, ofMinutes(1), algorithm),
                                    Tier.of(5, ofMinutes(1), algorithm).withCountRejected(),
                                    Tier.of(5, ofMinutes(1), algorithm).withBlockFor(ofMinutes(1))))
                    .filter(tier -> !store.supports(tier))
                    .map(tier -> DynamicTest.dynamicTest(tier.toString(), () ->
                            assertThatThrownBy(() -> acquire(tier))
                                    .isInstanceOf(UnsupportedOperationException.class)
                                    .hasMessageContaining(tier.algorithm().name())));
        }

        @Test
        void theAsynchronousCallDecidesTheSameWay() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            assertThat(store.tryAcquireAsync(key, List.of(tier), 2).toCompletableFuture().join().allowed()).isTrue();
            assertThat(store.tryAcquireAsync(key, List.of(tier), 1).toCompletableFuture().join())
                    .isEqualTo(store.tryAcquire(key, List.of(tier), 1));
        }

        @Test
        void theAsynchronousCallFailsTheStageForAMalformedRequest() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            assertThatThrownBy(() -> store.tryAcquireAsync(key, List.of(tier), 3).toCompletableFuture().join())
                    .isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalArgumentException.class);
        }
    }

    // ---------------------------------------------------------------- forgetting keys

    @Nested
    class Reset {

        private void reset(Tier... tiers) {
            store.reset(key, List.of(tiers));
        }

        @ParameterizedTest
        @RateAlgorithms
        void aRejectedKeyStartsAfreshWithItsWholeLimit(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);

            reset(tier);
            Decision first = acquire(tier);
            assertThat(first.allowed()).isTrue();
            assertThat(first.remaining()).isEqualTo(2);
            assertThat(admitUntilRejected(tier)).as("after the first call since the reset").isEqualTo(2);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aBlockedKeyIsAdmittedAgain(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(3, ofMinutes(1), algorithm).withBlockFor(ofMinutes(15));
            assumeSupported(tier);
            clock.alignTo(ofMinutes(1));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
            clock.advance(ofMinutes(2));
            assertThat(acquire(tier).allowed()).as("blocked, though the tier admits again").isFalse();

            reset(tier);
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
        }

        @ParameterizedTest
        @RateAlgorithms
        void everyTierOfTheKeyIsForgotten(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier perSecond = Tier.of(2, ofSeconds(1), algorithm);
            Tier perHour = Tier.of(3, ofHours(1), algorithm);
            clock.alignTo(ofHours(1));
            assertThat(admitUntilRejected(perSecond, perHour)).isEqualTo(2);
            clock.advance(ofSeconds(2));
            assertThat(admitUntilRejected(perSecond, perHour)).as("what the hour has left").isEqualTo(1);

            reset(perSecond, perHour);
            assertThat(admitUntilRejected(perSecond, perHour)).isEqualTo(2);
            clock.advance(ofSeconds(2));
            assertThat(admitUntilRejected(perSecond, perHour)).as("what the hour has left").isEqualTo(1);
        }

        @ParameterizedTest
        @RateAlgorithms
        void otherKeysKeepTheirCounts(Algorithm algorithm) {
            assumeSupported(algorithm);
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));
            String other = key + ":other";
            assertThat(store.tryAcquire(other, List.of(tier), 2).allowed()).isTrue();
            assertThat(acquire(2, tier).allowed()).isTrue();

            reset(tier);
            assertThat(store.tryAcquire(other, List.of(tier), 1).allowed()).as("another key").isFalse();
            assertThat(acquire(2, tier).allowed()).isTrue();
        }

        @Test
        void aKeyNeverSeenCanBeReset() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));

            reset(tier);
            assertThat(acquire(2, tier).allowed()).isTrue();
            assertThat(acquire(tier).allowed()).isFalse();
        }

        @Test
        void aResetWithoutTiersIsRefused() {
            assertThatThrownBy(() -> store.reset(key, List.of()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tier");
        }

        @Test
        void clearForgetsEveryKey() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(1, ofMinutes(1), algorithm);
            clock.alignTo(ofMinutes(1));
            List<String> keys = List.of(key, key + ":2", key + "{3}", key + "*");
            for (String each : keys) {
                assertThat(store.tryAcquire(each, List.of(tier), 1).allowed()).isTrue();
            }

            clear(store);
            for (String each : keys) {
                assertThat(store.tryAcquire(each, List.of(tier), 1).allowed()).as("key '%s'", each).isTrue();
            }
        }
    }

    // ---------------------------------------------------------------- giving back

    /**
     * {@link RateLimitStore#giveBack}: a store that gives back a tier's permits counts what it
     * would count without the call, in the window the call was counted in while that window
     * counts; blocks and counted rejections stay. A store that cannot says so with
     * {@link RateLimitStore#givesBack} and refuses; tests of what it cannot do are skipped.
     */
    @Nested
    class GiveBack {

        private void giveBack(long cost, Duration ago, Tier... tiers) {
            store.giveBack(key, List.of(tiers), cost, ago);
        }

        private void assumeGivesBack(Tier tier) {
            assumeSupported(tier);
            assumeTrue(store.givesBack(tier), () -> store.getClass().getSimpleName() + " does not give back " + tier);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aCallGivenBackAtOnceIsAsIfItHadNotBeenMadeInEveryTier(Algorithm algorithm) {
            Tier perSecond = Tier.of(4, ofSeconds(1), algorithm);
            Tier perMinute = Tier.of(6, ofMinutes(1), algorithm);
            assumeGivesBack(perSecond);
            assumeGivesBack(perMinute);
            clock.alignTo(ofMinutes(1));
            assertThat(acquire(3, perSecond, perMinute).allowed()).isTrue();

            giveBack(3, Duration.ZERO, perSecond, perMinute);
            assertThat(admitUntilRejected(perSecond, perMinute)).isEqualTo(4);
            clock.advance(ofSeconds(2));
            assertThat(admitUntilRejected(perSecond, perMinute)).as("what the minute has left").isEqualTo(2);
        }

        @ParameterizedTest
        @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW"})
        void aWindowTakesTheCostOffTheWindowTheCallWasCountedIn(Algorithm algorithm) {
            Tier tier = Tier.of(5, ofMinutes(1), algorithm);
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            clock.advance(ofSeconds(10));
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advance(ofSeconds(20));
            assertThat(acquire(3, tier).allowed()).isTrue();
            assertThat(acquire(tier).allowed()).isFalse();

            giveBack(2, ofSeconds(20), tier);
            assertThat(acquire(2, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
            assertThat(acquire(tier).allowed()).isFalse();
        }

        @Test
        @DisplayName("limit 10: 10 in the previous window, half of it covered; 2 given back of it, 1 more fits")
        void aSlidingWindowTakesTheCostOffThePreviousWindowWhenTheCallWasCountedThere() {
            Tier tier = Tier.of(10, ofMinutes(1), SLIDING_WINDOW);
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            Instant windowStart = clock.instant();
            clock.set(windowStart.minus(ofSeconds(10)));
            assertThat(acquire(2, tier).allowed()).isTrue();
            assertThat(acquire(8, tier).allowed()).isTrue();
            clock.set(windowStart.plus(ofSeconds(30)));
            // Half the previous window's 10: 5 fit.
            assertThat(admitUntilRejected(tier)).isEqualTo(5);

            giveBack(2, ofSeconds(40), tier);
            // ceil(8 × 1/2) + 5 = 9.
            assertThat(acquire(tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
            assertThat(acquire(tier).allowed()).isFalse();
        }

        @ParameterizedTest
        @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW"})
        void aCallWhoseWindowNoLongerCountsIsNotGivenBack(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            clock.advance(ofSeconds(50));
            assertThat(acquire(tier).allowed()).isTrue();
            // A fixed window stops counting the call at its end, a sliding one a window later.
            Duration later = algorithm == FIXED_WINDOW ? ofSeconds(20) : ofSeconds(80);
            clock.advance(later);
            assertThat(admitUntilRejected(tier)).isEqualTo(3);

            giveBack(1, later, tier);
            assertThat(acquire(tier).allowed()).as("the window since keeps its counts").isFalse();
        }

        @Test
        void aSlidingLogDropsTheNewestEntryOfTheCallsCostAdmittedNoLaterThanTheCall() {
            Tier tier = Tier.of(6, ofSeconds(1), SLIDING_LOG);
            assumeGivesBack(tier);
            Instant start = clock.instant();
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(50);
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(150);
            assertThat(acquire(1, tier).allowed()).isTrue();
            clock.advanceMillis(50);
            assertThat(acquire(1, tier).allowed()).isTrue();
            clock.advanceMillis(50);

            // A call of 2 admitted 100 ms ago or earlier: the entry 50 ms in, not the first.
            giveBack(2, ofMillis(100), tier);
            assertThat(acquire(2, tier)).isEqualTo(admitted(tier, 0, 1_000));
            clock.set(start.plusMillis(1_000));
            assertThat(acquire(2, tier)).as("the first entry left the window").isEqualTo(admitted(tier, 0, 1_000));
        }

        @Test
        void aSlidingLogGivesBackNoEntryAdmittedAfterTheCall() {
            Tier tier = Tier.of(3, ofSeconds(1), SLIDING_LOG);
            assumeGivesBack(tier);
            assertThat(acquire(tier).allowed()).isTrue();
            clock.advanceMillis(100);
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(100);

            // Admitted 150 ms ago or earlier: the entry of 2, 100 ms ago, is another call's.
            giveBack(2, ofMillis(150), tier);
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 900, 800));
        }

        @Test
        void aSlidingLogWithoutAnEntryOfTheCallsCostGivesNothingBack() {
            Tier tier = Tier.of(3, ofSeconds(1), SLIDING_LOG);
            assumeGivesBack(tier);
            for (int i = 0; i < 3; i++) {
                assertThat(acquire(tier).allowed()).isTrue();
            }
            clock.advanceMillis(100);

            giveBack(2, ofMillis(100), tier);
            assertThat(acquire(tier).allowed()).as("three calls of 1 are no call of 2").isFalse();
            giveBack(1, ofMillis(100), tier);
            assertThat(acquire(tier)).isEqualTo(admitted(tier, 0, 1_000));
        }

        @Test
        @DisplayName("capacity 10 at 10/s: 6 then 4 taken; 200 ms after the 6, 2 have refilled and 4 come back")
        void aTokenBucketGetsBackWhatOfTheCostItHasNotRefilledSince() {
            Tier tenPerSecond = Tier.of(10, ofSeconds(1), TOKEN_BUCKET);
            assumeGivesBack(tenPerSecond);
            assertThat(acquire(6, tenPerSecond).allowed()).isTrue();
            clock.advanceMillis(100);
            assertThat(acquire(4, tenPerSecond).allowed()).isTrue();
            clock.advanceMillis(100);

            giveBack(6, ofMillis(200), tenPerSecond);
            assertThat(acquire(6, tenPerSecond)).isEqualTo(admitted(tenPerSecond, 0, 1_000));
            assertThat(acquire(tenPerSecond).allowed()).isFalse();
        }

        @Test
        void aTokenBucketGetsBackNoMoreThanItsCapacity() {
            Tier tenPerSecond = Tier.of(10, ofSeconds(1), TOKEN_BUCKET);
            assumeGivesBack(tenPerSecond);
            assertThat(acquire(3, tenPerSecond).allowed()).isTrue();
            clock.advanceMillis(200);
            assertThat(acquire(1, tenPerSecond).allowed()).isTrue();

            // 8 tokens: the 3 taken, as if just now, come back, and the bucket holds 10.
            giveBack(3, Duration.ZERO, tenPerSecond);
            assertThat(acquire(10, tenPerSecond)).isEqualTo(admitted(tenPerSecond, 0, 1_000));
            assertThat(acquire(tenPerSecond)).isEqualTo(rejected(tenPerSecond, 0, 1_000, 100));
        }

        @ParameterizedTest
        @RateAlgorithms
        void aBlockStays(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm).withBlockFor(ofMinutes(15));
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
            clock.advanceMillis(1);

            giveBack(1, ofMillis(1), tier);
            long blockLeft = ofMinutes(15).toMillis() - 1;
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, blockLeft, blockLeft));
        }

        /** A sliding log keeps only the newest permits, whether admitted or counted rejections. */
        @ParameterizedTest
        @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
        void countedRejectionsStay(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm).withCountRejected();
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
            assertThat(acquire(tier).allowed()).isFalse();

            for (int i = 0; i < 3; i++) {
                giveBack(1, Duration.ZERO, tier);
            }
            assertThat(acquire(tier).allowed()).as("the two rejections and this call").isTrue();
            assertThat(acquire(tier).allowed()).isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aCallOfAKeyResetSinceIsNotGivenBack(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofHours(1), algorithm);
            assumeGivesBack(tier);
            clock.alignTo(ofHours(1));
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(1);
            store.reset(key, List.of(tier));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);

            giveBack(2, ofMillis(1), tier);
            assertThat(acquire(tier).allowed()).as("the calls since the reset stay counted").isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aKeyNeverSeenHasNothingToGiveBack(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));

            giveBack(3, ofSeconds(1), tier);
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aNegativeAgoIsTakenAsZero(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);

            // Taken as admitted now, not in a later window nor before a bucket's refill.
            giveBack(1, ofMinutes(-5), tier);
            assertThat(acquire(tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
            assertThat(acquire(tier).allowed()).isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void givesBackAsynchronouslyAsItGivesBackSynchronously(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            assertThat(acquire(2, tier).allowed()).isTrue();
            assertThat(acquire(tier).allowed()).isTrue();

            store.giveBackAsync(key, List.of(tier), 2, Duration.ZERO).toCompletableFuture().join();
            assertThat(acquire(2, tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
            assertThat(acquire(tier).allowed()).isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aLimiterGivesBackACallItAdmitted(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumeGivesBack(tier);
            clock.alignTo(ofMinutes(1));
            RateLimiter limiter = RateLimiter.builder().name("outcome").store(store).clock(clock).tier(tier).build();
            assertThat(limiter.givesBack()).isTrue();
            Instant admittedAt = clock.instant();
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.tryAcquire(key).allowed()).isTrue();
            }
            clock.advanceMillis(10);

            limiter.giveBack(key, 1, null, admittedAt);
            assertThat(limiter.tryAcquire(key).allowed()).isTrue();
            assertThat(limiter.tryAcquire(key).allowed()).isFalse();
        }

        @Test
        void aMalformedGiveBackIsRefused() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            assumeGivesBack(tier);
            Tier sharing = Tier.of(5, ofMinutes(1), algorithm);

            assertThatThrownBy(() -> store.giveBack(key, List.of(), 1, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tier");
            assertThatThrownBy(() -> store.giveBack(key, List.of(tier, sharing), 1, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share");
            assertThatThrownBy(() -> store.giveBack(key, List.of(tier), 0, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost");
            assertThatThrownBy(() -> store.giveBack(key, List.of(tier), 3, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("never be admitted");
            assertThatThrownBy(() -> store.giveBackAsync(key, List.of(tier), 3, Duration.ZERO).toCompletableFuture()
                    .join()).isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalArgumentException.class);
        }

        /** Whether a store gives back each tier it supports is what it does: it gives back or it refuses. */
        @TestFactory
        Stream<DynamicTest> aStoreGivesBackTheTiersItSaysItDoesAndRefusesTheOthers() {
            return Stream.of(Algorithm.values())
                    .map(algorithm -> Tier.of(5, ofMinutes(1), algorithm))
                    .filter(tier -> store.supports(tier))
                    .map(tier -> DynamicTest.dynamicTest(tier.toString(), () -> {
                        assertThat(acquire(tier).allowed()).isTrue();
                        if (store.givesBack(tier)) {
                            giveBack(1, Duration.ZERO, tier);
                            store.giveBackAsync(key, List.of(tier), 1, Duration.ZERO).toCompletableFuture().join();
                        } else {
                            assertThatThrownBy(() -> giveBack(1, Duration.ZERO, tier))
                                    .isInstanceOf(UnsupportedOperationException.class);
                            assertThatThrownBy(() -> store.giveBackAsync(key, List.of(tier), 1, Duration.ZERO)
                                    .toCompletableFuture().join()).isInstanceOf(CompletionException.class)
                                    .hasCauseInstanceOf(UnsupportedOperationException.class);
                            RateLimiter limiter = RateLimiter.builder().name("outcome").store(store).clock(clock)
                                    .tier(tier).build();
                            assertThat(limiter.givesBack()).isFalse();
                        }
                    }));
        }
    }

    // ---------------------------------------------------------------- pausing

    /**
     * {@link RateLimitStore#pause}: a paused key is rejected as a blocked one is, until the pause
     * ends by the store's time; a pause never shortens a block or pause in place, and counts stay.
     * A store that cannot pause says so with {@link RateLimitStore#pauses} and refuses; tests of
     * what it cannot do are skipped.
     */
    @Nested
    class Pause {

        private void pause(Duration duration, Tier... tiers) {
            store.pause(key, List.of(tiers), duration);
        }

        private void assumePauses(Tier tier) {
            assumeSupported(tier);
            assumeTrue(store.pauses(tier), () -> store.getClass().getSimpleName() + " does not pause " + tier);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aPausedKeyIsRejectedWithTheTimeLeftUntilThePauseEndsThenIsFresh(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumePauses(tier);
            clock.alignTo(ofMinutes(1));

            pause(ofSeconds(90), tier);
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 90_000, 90_000));
            clock.advance(ofSeconds(30));
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 60_000, 60_000));
            clock.advance(ofSeconds(60).minusMillis(1));
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 1, 1));
            clock.advanceMillis(1);
            assertThat(admitUntilRejected(tier)).as("once the pause ended, a fresh key's limit").isEqualTo(3);
        }

        @ParameterizedTest
        @RateAlgorithms
        void countsStayAsTheyWere(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofHours(1), algorithm);
            assumePauses(tier);
            clock.alignTo(ofHours(1));
            assertThat(acquire(2, tier).allowed()).isTrue();

            pause(ofMinutes(10), tier);
            clock.advance(ofMinutes(10).minusMillis(1));
            assertThat(acquire(tier).allowed()).as("paused").isFalse();
            clock.advanceMillis(1);
            // A bucket refilled half a token meanwhile: 1.5 tokens, of which the call takes one.
            assertThat(acquire(tier)).extracting(Decision::allowed, Decision::remaining).containsExactly(true, 0L);
            assertThat(acquire(tier).allowed()).as("the two calls before the pause still count").isFalse();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aShorterPauseDoesNotShortenALongerOneAndALongerOneExtendsIt(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumePauses(tier);

            pause(ofMinutes(10), tier);
            clock.advance(ofMinutes(1));
            pause(ofMinutes(1), tier);
            clock.advance(ofMinutes(2));
            assertThat(acquire(tier).retryAfter()).isEqualTo(ofMinutes(7));

            pause(ofMinutes(20), tier);
            assertThat(acquire(tier).retryAfter()).isEqualTo(ofMinutes(20));
            clock.advance(ofMinutes(20));
            assertThat(acquire(tier).allowed()).isTrue();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aPauseDoesNotShortenABlock(Algorithm algorithm) {
            Tier tier = Tier.of(1, ofMinutes(1), algorithm).withBlockFor(ofMinutes(15));
            assumePauses(tier);
            clock.alignTo(ofMinutes(1));
            assertThat(admitUntilRejected(tier)).isEqualTo(1);

            pause(ofMinutes(1), tier);
            clock.advance(ofMinutes(2));
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, ofMinutes(13).toMillis(), ofMinutes(13).toMillis()));
        }

        @ParameterizedTest
        @RateAlgorithms
        void aPauseCoversEveryTierPausedWhicheverTiersACallBrings(Algorithm algorithm) {
            Tier perSecond = Tier.of(5, ofSeconds(1), algorithm);
            Tier perHour = Tier.of(100, ofHours(1), algorithm);
            assumePauses(perSecond);
            assumePauses(perHour);

            pause(ofSeconds(30), perSecond, perHour);
            assertThat(acquire(perSecond, perHour).retryAfter()).isEqualTo(ofSeconds(30));
            assertThat(acquire(perHour)).isEqualTo(rejected(perHour, 0, 30_000, 30_000));
            assertThat(acquire(perSecond)).isEqualTo(rejected(perSecond, 0, 30_000, 30_000));
        }

        @Test
        void aPausedKeyIsNotReserved() {
            Tier tier = Tier.of(10, ofSeconds(10), TOKEN_BUCKET);
            assumePauses(tier);
            assumeTrue(store.reserves(tier), () -> store.getClass().getSimpleName() + " does not reserve " + tier);

            pause(ofSeconds(5), tier);
            Reservation reservation = store.reserve(key, List.of(tier), 1, ofSeconds(10));
            assertThat(reservation.decision()).isEqualTo(rejected(tier, 0, 5_000, 5_000));
            assertThat(reservation.delay()).isZero();
        }

        @ParameterizedTest
        @ValueSource(longs = {0, -1, -60_000})
        void aPauseOfNoTimeChangesNothing(long millis) {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumePauses(tier);
            clock.alignTo(ofMinutes(1));
            assertThat(acquire(tier).allowed()).isTrue();

            pause(ofMillis(millis), tier);
            assertThat(admitUntilRejected(tier)).isEqualTo(2);
        }

        @Test
        void aPartOfAMillisecondPausesForAWholeOne() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumePauses(tier);

            pause(Duration.ofNanos(1), tier);
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 1, 1));
            clock.advanceMillis(1);
            assertThat(acquire(tier).allowed()).isTrue();
        }

        @ParameterizedTest
        @RateAlgorithms
        void otherKeysAreNotPaused(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumePauses(tier);

            pause(ofMinutes(1), tier);
            assertThat(store.tryAcquire(key + ":other", List.of(tier), 1).allowed()).isTrue();
        }

        @ParameterizedTest
        @RateAlgorithms
        void aResetEndsAPause(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumePauses(tier);

            pause(ofMinutes(1), tier);
            store.reset(key, List.of(tier));
            assertThat(acquire(tier).allowed()).isTrue();
        }

        @ParameterizedTest
        @RateAlgorithms
        void pausesAsynchronouslyAsItPausesSynchronously(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumePauses(tier);

            store.pauseAsync(key, List.of(tier), ofSeconds(20)).toCompletableFuture().join();
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 20_000, 20_000));
        }

        @ParameterizedTest
        @RateAlgorithms
        void aLimiterPausesAKeyUnderItsPlan(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            Tier gold = Tier.of(30, ofMinutes(1), algorithm);
            assumePauses(tier);
            RateLimiter limiter = RateLimiter.builder().name("partner").store(store).clock(clock).tier(tier)
                    .plan("gold", List.of(gold)).build();
            assertThat(limiter.pauses()).isTrue();

            limiter.pause(key, "gold", ofSeconds(30));
            assertThat(limiter.tryAcquire(key, 1, "gold")).isEqualTo(rejected(gold, 0, 30_000, 30_000));
            limiter.pauseAsync(key, "gold", ofSeconds(40)).toCompletableFuture().join();
            assertThat(limiter.tryAcquire(key, 1, "gold").retryAfter()).isEqualTo(ofSeconds(40));
        }

        @Test
        void aMalformedPauseIsRefused() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            assumePauses(tier);
            Tier sharing = Tier.of(5, ofMinutes(1), algorithm);

            assertThatThrownBy(() -> store.pause(key, List.of(), ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tier");
            assertThatThrownBy(() -> store.pause(key, List.of(tier, sharing), ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share");
            assertThatThrownBy(() -> store.pause(key, List.of(tier), null))
                    .isInstanceOf(NullPointerException.class).hasMessageContaining("duration");
            assertThatThrownBy(() -> store.pause(key, List.of(tier), ofMillis((1L << 52) + 1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2^52");
            assertThatThrownBy(() -> store.pauseAsync(key, List.of(), ofSeconds(1)).toCompletableFuture().join())
                    .isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalArgumentException.class);
        }

        /** A long pause is the caller's to cap: the store holds it. */
        @Test
        void aPauseOfAYearHolds() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            assumePauses(tier);

            pause(ofDays(365), tier);
            clock.advance(ofDays(364));
            assertThat(acquire(tier).retryAfter()).isEqualTo(ofDays(1));
        }

        /** Whether a store pauses each tier it supports is what it does: it pauses or it refuses. */
        @TestFactory
        Stream<DynamicTest> aStorePausesTheTiersItSaysItDoesAndRefusesTheOthers() {
            return Stream.of(Algorithm.values())
                    .map(algorithm -> Tier.of(5, ofMinutes(1), algorithm))
                    .filter(tier -> store.supports(tier))
                    .map(tier -> DynamicTest.dynamicTest(tier.toString(), () -> {
                        String paused = key + ":" + tier.algorithm();
                        if (store.pauses(tier)) {
                            store.pause(paused, List.of(tier), ofSeconds(1));
                            store.pauseAsync(paused, List.of(tier), ofSeconds(1)).toCompletableFuture().join();
                            assertThat(store.tryAcquire(paused, List.of(tier), 1).allowed()).isFalse();
                        } else {
                            assertThatThrownBy(() -> store.pause(paused, List.of(tier), ofSeconds(1)))
                                    .isInstanceOf(UnsupportedOperationException.class);
                            assertThatThrownBy(() -> store.pauseAsync(paused, List.of(tier), ofSeconds(1))
                                    .toCompletableFuture().join()).isInstanceOf(CompletionException.class)
                                    .hasCauseInstanceOf(UnsupportedOperationException.class);
                            RateLimiter limiter = RateLimiter.builder().name("partner").store(store).clock(clock)
                                    .tier(tier).build();
                            assertThat(limiter.pauses()).isFalse();
                            assertThat(store.tryAcquire(paused, List.of(tier), 1).allowed()).isTrue();
                        }
                    }));
        }
    }

    // ---------------------------------------------------------------- recounting

    /**
     * {@link RateLimitStore#recount}: a sliding log moves the entry of the call, the one a
     * give-back would drop, to now; other algorithms keep their counters. A store that cannot
     * recount says so with {@link RateLimitStore#recounts} and refuses; tests of what it cannot do
     * are skipped.
     */
    @Nested
    class Recount {

        private void recount(long cost, Duration ago, Tier... tiers) {
            store.recount(key, List.of(tiers), cost, ago);
        }

        private void assumeRecounts(Tier tier) {
            assumeSupported(tier);
            assumeTrue(store.recounts(tier), () -> store.getClass().getSimpleName() + " does not recount " + tier);
        }

        @Test
        @DisplayName("3 per second: a call at 0 and 2 at 100 ms; the first recounted at 400 ms leaves at 1,400 ms")
        void aSlidingLogCountsTheCallAgainFromNow() {
            Tier tier = Tier.of(3, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            Instant start = clock.instant();
            assertThat(acquire(tier).allowed()).isTrue();
            clock.advanceMillis(100);
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.set(start.plusMillis(400));

            recount(1, ofMillis(400), tier);
            clock.set(start.plusMillis(1_000));
            assertThat(acquire(tier)).as("the first call counts from 400 ms now, no longer from 0")
                    .isEqualTo(rejected(tier, 0, 400, 100));
            clock.set(start.plusMillis(1_100));
            assertThat(acquire(2, tier)).isEqualTo(admitted(tier, 0, 1_000));
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 1_000, 300));
            clock.set(start.plusMillis(1_399));
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 701, 1));
            clock.set(start.plusMillis(1_400));
            assertThat(acquire(tier)).isEqualTo(admitted(tier, 0, 1_000));
        }

        @Test
        void aSlidingLogMovesTheNewestEntryOfTheCallsCostAdmittedNoLaterThanTheCall() {
            Tier tier = Tier.of(6, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            Instant start = clock.instant();
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(50);
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(150);
            assertThat(acquire(1, tier).allowed()).isTrue();
            clock.advanceMillis(50);
            assertThat(acquire(1, tier).allowed()).isTrue();
            clock.advanceMillis(50);

            // A call of 2 admitted 100 ms ago or earlier: the entry 50 ms in, not the first.
            recount(2, ofMillis(100), tier);
            clock.set(start.plusMillis(1_000));
            assertThat(acquire(2, tier)).as("the first entry left the window").isEqualTo(admitted(tier, 0, 1_000));
            clock.set(start.plusMillis(1_250));
            assertThat(acquire(2, tier)).as("the calls of 1 left, the one moved to 300 ms did not")
                    .isEqualTo(admitted(tier, 0, 1_000));
            clock.set(start.plusMillis(1_300));
            assertThat(acquire(2, tier)).isEqualTo(admitted(tier, 0, 1_000));
        }

        @Test
        @DisplayName("3 per second, 3 calls in one millisecond: one of them recounted, two leave a window later")
        void aSlidingLogMovesOneCallOfSeveralInOneMillisecond() {
            Tier tier = Tier.of(3, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            Instant start = clock.instant();
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
            clock.advanceMillis(400);

            recount(1, ofMillis(400), tier);
            clock.set(start.plusMillis(1_000));
            assertThat(admitUntilRejected(tier)).isEqualTo(2);
            clock.set(start.plusMillis(1_400));
            assertThat(admitUntilRejected(tier)).isEqualTo(1);
        }

        @Test
        void aSlidingLogMovesNoEntryAdmittedAfterTheCall() {
            Tier tier = Tier.of(3, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            Instant start = clock.instant();
            assertThat(acquire(tier).allowed()).isTrue();
            clock.advanceMillis(100);
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(100);

            // Admitted 150 ms ago or earlier: the entry of 2, 100 ms ago, is another call's.
            recount(2, ofMillis(150), tier);
            clock.set(start.plusMillis(1_100));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
        }

        @Test
        void aCallNoLongerInTheLogIsNotRecounted() {
            Tier tier = Tier.of(3, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            assertThat(acquire(tier).allowed()).isTrue();
            clock.advanceMillis(1_000);

            recount(1, ofMillis(1_000), tier);
            assertThat(admitUntilRejected(tier)).as("the call left the window before").isEqualTo(3);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aCallOfAKeyResetSinceIsNotRecounted(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofSeconds(1), algorithm);
            assumeRecounts(tier);
            clock.alignTo(ofSeconds(1));
            assertThat(acquire(tier).allowed()).isTrue();
            clock.advanceMillis(1);
            store.reset(key, List.of(tier));

            recount(1, ofMillis(1), tier);
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
        }

        @ParameterizedTest
        @RateAlgorithms
        void aKeyNeverSeenHasNothingToRecount(Algorithm algorithm) {
            Tier tier = Tier.of(3, ofMinutes(1), algorithm);
            assumeRecounts(tier);

            recount(3, ofSeconds(1), tier);
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
        }

        /**
         * Two keys with the same calls, one of them recounted: fixed windows, sliding windows and
         * token buckets decide both alike, alone or beside a sliding log.
         */
        @ParameterizedTest
        @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
        void countersWithoutCallTimesStayAsTheyWere(Algorithm algorithm) {
            Tier tier = Tier.of(4, ofSeconds(1), algorithm);
            Tier log = Tier.of(10, ofSeconds(3), SLIDING_LOG);
            assumeRecounts(tier);
            List<List<Tier>> mixes = store.recounts(log) && store.supports(log)
                    ? List.of(List.of(tier), List.of(tier, log)) : List.of(List.of(tier));
            clock.alignTo(ofSeconds(1));
            clock.advanceMillis(600);
            for (List<Tier> tiers : mixes) {
                String recounted = key + ":" + tiers.size();
                String untouched = recounted + ":untouched";
                for (String each : List.of(recounted, untouched)) {
                    assertThat(store.tryAcquire(each, tiers, 2).allowed()).isTrue();
                    assertThat(store.tryAcquire(each, tiers, 1).allowed()).isTrue();
                }
            }
            clock.advanceMillis(300);

            for (List<Tier> tiers : mixes) {
                store.recount(key + ":" + tiers.size(), tiers, 2, ofMillis(300));
            }
            for (int step = 0; step < 6; step++) {
                for (List<Tier> tiers : mixes) {
                    String recounted = key + ":" + tiers.size();
                    Decision expected = store.tryAcquire(recounted + ":untouched", List.of(tier), 1);
                    assertThat(store.tryAcquire(recounted, List.of(tier), 1)).as("step %d, %s", step, tiers)
                            .isEqualTo(expected);
                }
                clock.advanceMillis(250);
            }
        }

        @Test
        void aNegativeAgoIsTakenAsZero() {
            Tier tier = Tier.of(3, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            Instant start = clock.instant();
            assertThat(acquire(tier).allowed()).isTrue();
            clock.advanceMillis(100);
            assertThat(acquire(2, tier).allowed()).isTrue();
            clock.advanceMillis(100);

            // The newest call of 1 admitted no later than now: the first, moved to 200 ms.
            recount(1, ofMinutes(-5), tier);
            clock.set(start.plusMillis(1_100));
            assertThat(acquire(3, tier)).as("the first call counts from 200 ms").isEqualTo(rejected(tier, 2, 100, 100));
            clock.set(start.plusMillis(1_200));
            assertThat(admitUntilRejected(tier)).isEqualTo(3);
        }

        @Test
        void aCallRecountedInTheMillisecondItWasAdmittedStaysAsItIs() {
            Tier tier = Tier.of(2, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            assertThat(acquire(tier).allowed()).isTrue();

            recount(1, Duration.ZERO, tier);
            assertThat(acquire(tier)).isEqualTo(admitted(tier, 0, 1_000));
            clock.advanceMillis(1_000);
            assertThat(admitUntilRejected(tier)).isEqualTo(2);
        }

        @Test
        void recountsAsynchronouslyAsItRecountsSynchronously() {
            Tier tier = Tier.of(1, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            assertThat(acquire(tier).allowed()).isTrue();
            clock.advanceMillis(500);

            store.recountAsync(key, List.of(tier), 1, ofMillis(500)).toCompletableFuture().join();
            clock.advanceMillis(500);
            assertThat(acquire(tier)).isEqualTo(rejected(tier, 0, 500, 500));
        }

        @Test
        void aLimiterRecountsACallItAdmitted() {
            Tier tier = Tier.of(1, ofSeconds(1), SLIDING_LOG);
            assumeRecounts(tier);
            RateLimiter limiter = RateLimiter.builder().name("partner").store(store).clock(clock).tier(tier).build();
            assertThat(limiter.recounts()).isTrue();
            Instant sentAt = clock.instant();
            assertThat(limiter.tryAcquire(key).allowed()).isTrue();
            clock.advanceMillis(300);

            limiter.recount(key, 1, null, sentAt);
            clock.advanceMillis(100);
            limiter.recountAsync(key, 1, null, sentAt.plusMillis(300)).toCompletableFuture().join();
            clock.advanceMillis(600);
            assertThat(limiter.tryAcquire(key)).as("the call counts from 400 ms")
                    .isEqualTo(rejected(tier, 0, 400, 400));
        }

        @Test
        void aMalformedRecountIsRefused() {
            Algorithm algorithm = store.supportedAlgorithms().iterator().next();
            Tier tier = Tier.of(2, ofMinutes(1), algorithm);
            assumeRecounts(tier);
            Tier sharing = Tier.of(5, ofMinutes(1), algorithm);

            assertThatThrownBy(() -> store.recount(key, List.of(), 1, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tier");
            assertThatThrownBy(() -> store.recount(key, List.of(tier, sharing), 1, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share");
            assertThatThrownBy(() -> store.recount(key, List.of(tier), 0, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost");
            assertThatThrownBy(() -> store.recount(key, List.of(tier), 3, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("never be admitted");
            assertThatThrownBy(() -> store.recount(key, List.of(tier), 1, null))
                    .isInstanceOf(NullPointerException.class).hasMessageContaining("ago");
            assertThatThrownBy(() -> store.recountAsync(key, List.of(tier), 3, Duration.ZERO).toCompletableFuture()
                    .join()).isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalArgumentException.class);
        }

        /** Whether a store recounts each tier it supports is what it does: it recounts or it refuses. */
        @TestFactory
        Stream<DynamicTest> aStoreRecountsTheTiersItSaysItDoesAndRefusesTheOthers() {
            return Stream.of(Algorithm.values())
                    .map(algorithm -> Tier.of(5, ofMinutes(1), algorithm))
                    .filter(tier -> store.supports(tier))
                    .map(tier -> DynamicTest.dynamicTest(tier.toString(), () -> {
                        String recounted = key + ":" + tier.algorithm();
                        assertThat(store.tryAcquire(recounted, List.of(tier), 1).allowed()).isTrue();
                        if (store.recounts(tier)) {
                            store.recount(recounted, List.of(tier), 1, Duration.ZERO);
                            store.recountAsync(recounted, List.of(tier), 1, Duration.ZERO).toCompletableFuture()
                                    .join();
                        } else {
                            assertThatThrownBy(() -> store.recount(recounted, List.of(tier), 1, Duration.ZERO))
                                    .isInstanceOf(UnsupportedOperationException.class);
                            assertThatThrownBy(() -> store.recountAsync(recounted, List.of(tier), 1, Duration.ZERO)
                                    .toCompletableFuture().join()).isInstanceOf(CompletionException.class)
                                    .hasCauseInstanceOf(UnsupportedOperationException.class);
                            RateLimiter limiter = RateLimiter.builder().name("partner").store(store).clock(clock)
                                    .tier(tier).build();
                            assertThat(limiter.recounts()).isFalse();
                        }
                        assertThat(store.tryAcquire(recounted, List.of(tier), 4).allowed()).as("nothing else changed")
                                .isTrue();
                    }));
        }
    }

    // ---------------------------------------------------------------- what a key costs

    /**
     * A store keeps a long key as it keeps a short one: 250 keys of 64 KB each (16 MB of keys)
     * leave the heap within 4 MB of what 250 short keys leave (stores measure under 0.6 MB).
     */
    @Test
    void longKeysCostTheHeapNoMoreThanShortOnes() {
        Tier tier = Tier.of(1, ofMinutes(1), store.supportedAlgorithms().iterator().next());
        String longPart = "k".repeat(64 * 1_024);
        clock.alignTo(ofMinutes(1));
        long before = retainedHeap();
        decideDistinctKeys(i -> key + ":" + i, tier);
        long afterShort = retainedHeap();
        decideDistinctKeys(i -> key + ":" + i + longPart, tier);
        long afterLong = retainedHeap();

        // Memory an earlier test's resources free meanwhile (a client shutting down on its own
        // threads) can make the short keys' figure negative; what keys cost is never below zero.
        long shortKeys = Math.max(0, afterShort - before);
        long longKeys = afterLong - afterShort;
        System.out.printf("%s: 250 short keys retain %,d bytes, 250 keys of 64 KB %,d bytes%n",
                store.getClass().getSimpleName(), shortKeys, longKeys);
        assertThat(longKeys - shortKeys).as("heap retained by 250 keys of 64 KB beyond 250 short keys")
                .isLessThan(4L << 20);
    }

    /** Decides one call for each of 250 keys. */
    private void decideDistinctKeys(IntFunction<String> keys, Tier tier) {
        for (int i = 0; i < 250; i++) {
            assertThat(store.tryAcquire(keys.apply(i), List.of(tier), 1)).as("a new key's first call")
                    .returns(true, Decision::allowed);
        }
    }

    /**
     * The heap in use once garbage is collected: the least of several collections, so that
     * garbage made meanwhile by other threads (a client's, a background sync) does not count.
     */
    private static long retainedHeap() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long least = Long.MAX_VALUE;
        for (int collection = 0; collection < 5; collection++) {
            System.gc();
            least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
        }
        return least;
    }
}
