package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.tck.ClockAdvancingSleeper;
import dev.sluice.tck.MutableClock;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2300-01-01T00:00:00Z"));
    private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
    private final ClockAdvancingSleeper sleeper = new ClockAdvancingSleeper(clock);
    private final List<Duration> sleeps = sleeper.sleeps();

    private RateLimiter.Builder limiter(String name) {
        return RateLimiter.builder().name(name).store(store).clock(clock).sleeper(sleeper);
    }

    @Nested
    class Rejecting {

        private final RateLimiter twoPerMinute = limiter("otp")
                .tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW))
                .message("Too many codes")
                .build();

        @Test
        void throwsACheapExceptionNamingTheLimiterAndTheWaitButNotTheKey() {
            clock.set(Instant.parse("2300-01-01T00:00:15Z"));
            twoPerMinute.acquire("+4420790000");
            twoPerMinute.acquire("+4420790000");

            assertThatThrownBy(() -> twoPerMinute.acquire("+4420790000"))
                    .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                        assertThat(e.limiterName()).isEqualTo("otp");
                        assertThat(e.key()).isEqualTo("+4420790000");
                        assertThat(e.retryAfter()).isEqualTo(ofSeconds(45));
                        assertThat(e.decision().allowed()).isFalse();
                        assertThat(e.reason()).isEqualTo("Too many codes");
                        assertThat(e.getMessage()).isEqualTo("Too many codes (limiter 'otp'; retry after 45000 ms)")
                                .doesNotContain("+4420790000");
                        assertThat(e.getStackTrace()).isEmpty();
                    });
            assertThat(sleeps).isEmpty();
        }

        @Test
        void tryAcquireDecidesWithoutThrowing() {
            assertThat(twoPerMinute.tryAcquire("k", 2).allowed()).isTrue();
            assertThat(twoPerMinute.tryAcquire("k").allowed()).isFalse();
        }

        @Test
        void countsEachLimiterSeparatelyForTheSameKey() {
            RateLimiter other = limiter("other").tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW)).build();
            twoPerMinute.acquire("k", 2);

            assertThat(other.tryAcquire("k", 2).allowed()).isTrue();
        }

        @Test
        void neverSharesCountersBetweenNamesAndKeysThatSpellTheSame() {
            RateLimiter a = limiter("a").tier(Tier.of(1, ofMinutes(1), FIXED_WINDOW)).build();
            RateLimiter ab = limiter("a:b").tier(Tier.of(1, ofMinutes(1), FIXED_WINDOW)).build();
            a.acquire("b:c");

            assertThat(ab.tryAcquire("c").allowed()).isTrue();
        }

        @Test
        void failsTheFutureForAsynchronousCalls() {
            twoPerMinute.acquire("k", 2);

            CompletableFuture<Decision> future = twoPerMinute.acquireAsync("k").toCompletableFuture();
            assertThatThrownBy(future::join).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(RateLimitExceededException.class);
        }

        @Test
        void rejectsACallCostingMoreThanATierHoldsWithoutAskingTheStoreOrWaiting() {
            RateLimiter patient = limiter("uploads").onLimit(OnLimit.WAIT).maxWait(ofMinutes(90))
                    .tier(Tier.of(5, ofMinutes(1), FIXED_WINDOW))
                    .tier(Tier.of(10, Duration.ofHours(1), TOKEN_BUCKET))
                    .build();

            assertThat(patient.tryAcquire("k", 7)).as("beyond the minute's 5")
                    .isEqualTo(new Decision(false, 5, 0, ofMinutes(1), ofMinutes(1), ofMinutes(1)));
            assertThatThrownBy(() -> patient.acquire("k", 11)).as("beyond the hour's 10 too: the longer window binds")
                    .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                        assertThat(e.retryAfter()).isEqualTo(Duration.ofHours(1));
                        assertThat(e.decision().window()).isEqualTo(Duration.ofHours(1));
                    });
            assertThatThrownBy(() -> patient.acquireAsync("k", Long.MAX_VALUE).toCompletableFuture().join())
                    .hasCauseInstanceOf(RateLimitExceededException.class);
            assertThat(sleeps).as("no wait lets such a call pass").isEmpty();
            assertThat(patient.tryAcquire("k", 5).allowed()).as("nothing was counted").isTrue();
        }

        @Test
        void usesADefaultReasonWithoutAMessage() {
            RateLimiter plain = limiter("plain").tier(Tier.of(1, ofMinutes(1), FIXED_WINDOW)).build();
            plain.acquire("k");
            assertThatThrownBy(() -> plain.acquire("k")).hasMessageStartingWith("Rate limit exceeded (limiter 'plain'");
        }
    }

    @Nested
    class Waiting {

        private final RateLimiter tenPerSecond = limiter("partner")
                .tier(Tier.of(10, ofSeconds(1), TOKEN_BUCKET))
                .onLimit(OnLimit.WAIT)
                .maxWait(ofSeconds(1))
                .build();

        @Test
        void waitsUntilItsPermitIsDue() {
            tenPerSecond.acquire("k", 10);

            Decision decision = tenPerSecond.acquire("k", 3);
            assertThat(decision.allowed()).isTrue();
            assertThat(sleeps).containsExactly(ofMillis(300));
        }

        @Test
        void rejectsAtOnceWhenTheCallCannotFitWithinMaxWait() {
            RateLimiter shortWait = limiter("short")
                    .tier(Tier.of(10, ofSeconds(1), TOKEN_BUCKET))
                    .onLimit(OnLimit.WAIT)
                    .maxWait(ofMillis(299))
                    .build();
            shortWait.acquire("k", 10);

            assertThatThrownBy(() -> shortWait.acquire("k", 3)).isInstanceOf(RateLimitExceededException.class);
            assertThat(sleeps).isEmpty();
        }

        @Test
        void keepsWaitingWhileOthersTakeThePermitsButNoLongerThanMaxWaitInAll() {
            Tier onePerSecond = Tier.of(1, ofSeconds(1), FIXED_WINDOW);
            RateLimiter contended = RateLimiter.builder().name("contended").store(store).clock(clock)
                    .tier(onePerSecond)
                    .onLimit(OnLimit.WAIT)
                    .maxWait(ofMillis(2_500))
                    .sleeper(duration -> {
                        sleeper.sleep(duration);
                        // Another instance takes the permit while this caller sleeps.
                        store.tryAcquire("contended:k", List.of(onePerSecond), 1);
                    })
                    .build();
            clock.set(Instant.parse("2300-01-01T00:00:00.500Z"));
            contended.acquire("k");

            assertThatThrownBy(() -> contended.acquire("k")).isInstanceOf(RateLimitExceededException.class);
            assertThat(sleeps).containsExactly(ofMillis(500), ofMillis(1_000), ofMillis(1_000));
        }

        @Test
        void anInterruptedWaitRejectsAndKeepsTheInterruptFlag() {
            RateLimiter interrupted = RateLimiter.builder().name("interrupted").store(store).clock(clock)
                    .tier(Tier.of(1, ofSeconds(1), FIXED_WINDOW))
                    .onLimit(OnLimit.WAIT)
                    .maxWait(ofSeconds(5))
                    .sleeper(duration -> {
                        throw new InterruptedException();
                    })
                    .build();
            interrupted.acquire("k");
            try {
                assertThatThrownBy(() -> interrupted.acquire("k")).isInstanceOf(RateLimitExceededException.class);
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
            } finally {
                Thread.interrupted();
            }
        }

        @Test
        void asynchronousCallsScheduleTheWaitInsteadOfBlocking() {
            RateLimiter asyncOnly = RateLimiter.builder().name("async").store(store).clock(clock)
                    .tier(Tier.of(10, ofSeconds(1), TOKEN_BUCKET))
                    .onLimit(OnLimit.WAIT)
                    .maxWait(ofSeconds(1))
                    .sleeper(new Sleeper() {
                        @Override
                        public void sleep(Duration duration) {
                            throw new AssertionError("blocked the caller");
                        }

                        @Override
                        public CompletionStage<Void> sleepAsync(Duration duration) {
                            return sleeper.sleepAsync(duration);
                        }
                    })
                    .build();
            asyncOnly.acquire("k", 10);

            assertThat(asyncOnly.acquireAsync("k", 2).toCompletableFuture().join().allowed()).isTrue();
            assertThat(sleeps).containsExactly(ofMillis(200));
        }
    }

    @Nested
    class StoreFailures {

        /** A store that is down: every decision fails as a network error would. */
        private final RateLimitStore down = new RateLimitStore() {
            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                RateLimitStore.check(this, key, tiers, cost);
                throw new UncheckedIOException("connection refused", new ConnectException());
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                return CompletableFuture.failedFuture(new UncheckedIOException("connection refused", new ConnectException()));
            }
        };

        private RateLimiter limiter(FailurePolicy policy) {
            return RateLimiter.builder().name("guarded").store(down).clock(clock)
                    .tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW))
                    .onStoreFailure(policy)
                    .build();
        }

        @Test
        void failClosedRefusesWithATypedExceptionNamingTheLimiter() {
            RateLimiter closed = limiter(FailurePolicy.FAIL_CLOSED);
            assertThatThrownBy(() -> closed.acquire("+447700900123"))
                    .isInstanceOfSatisfying(StoreUnavailableException.class, e -> {
                        assertThat(e.limiterName()).isEqualTo("guarded");
                        assertThat(e.retryAfter()).isPositive();
                        assertThat(e.getCause()).hasMessage("connection refused");
                    })
                    .hasMessage("Rate limiter 'guarded' could not decide: UncheckedIOException: connection refused")
                    .hasMessageNotContaining("+447700900123");
            assertThatThrownBy(() -> closed.tryAcquire("k")).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(() -> closed.acquireAsync("k").toCompletableFuture().join())
                    .hasCauseInstanceOf(StoreUnavailableException.class);
        }

        @Test
        void failClosedPassesOnWhenTheStoreIsWorthAskingAgain() {
            RateLimiter closed = RateLimiter.builder().name("guarded").clock(clock)
                    .tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW)).onStoreFailure(FailurePolicy.FAIL_CLOSED)
                    .store(failingWith(new StoreUnavailableException("circuit open", ofMillis(700))))
                    .build();
            assertThatThrownBy(() -> closed.acquire("k")).isInstanceOfSatisfying(StoreUnavailableException.class,
                    e -> assertThat(e.retryAfter()).isEqualTo(ofMillis(700)));
        }

        @Test
        void failOpenAdmitsUnchecked() {
            RateLimiter open = limiter(FailurePolicy.FAIL_OPEN);
            for (int i = 0; i < 5; i++) {
                assertThat(open.acquire("k").allowed()).isTrue();
                assertThat(open.acquireAsync("k").toCompletableFuture().join().allowed()).isTrue();
            }
        }

        @Test
        void localFallbackStillLimitsInThisJvm() {
            RateLimiter local = limiter(FailurePolicy.LOCAL_FALLBACK);
            local.acquire("k");
            local.acquireAsync("k").toCompletableFuture().join();
            assertThatThrownBy(() -> local.acquire("k")).isInstanceOf(RateLimitExceededException.class);
            assertThat(local.tryAcquire("other").allowed()).isTrue();
        }

        @Test
        void decidesInThisJvmByDefault() {
            RateLimiter unconfigured = RateLimiter.builder().name("guarded").store(down).clock(clock)
                    .tier(Tier.of(1, ofMinutes(1), FIXED_WINDOW)).build();
            assertThat(unconfigured.onStoreFailure()).isEqualTo(FailurePolicy.LOCAL_FALLBACK);
            assertThat(unconfigured.tryAcquire("k").allowed()).isTrue();
            assertThat(unconfigured.tryAcquire("k").allowed()).isFalse();
        }

        @Test
        void limitersMayShareOneFallbackStoreWithoutSharingCounts() {
            InMemoryRateLimitStore fallback = InMemoryRateLimitStore.builder().clock(clock).build();
            RateLimiter first = RateLimiter.builder().name("first").store(down).clock(clock).fallbackStore(fallback)
                    .tier(Tier.of(1, ofMinutes(1), FIXED_WINDOW)).build();
            RateLimiter second = RateLimiter.builder().name("second").store(down).clock(clock).fallbackStore(fallback)
                    .tier(Tier.of(1, ofMinutes(1), FIXED_WINDOW)).build();
            assertThat(first.tryAcquire("k").allowed()).isTrue();
            assertThat(second.tryAcquire("k").allowed()).isTrue();
            assertThat(fallback.tryAcquire("first:k", first.tiers(), 1).allowed()).as("counted in the shared store")
                    .isFalse();
        }

        @Test
        void anAsynchronousFailureOfAnyKindTakesThePolicy() {
            RateLimiter open = RateLimiter.builder().name("guarded").clock(clock).onStoreFailure(FailurePolicy.FAIL_OPEN)
                    .tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW))
                    .store(failingWith(new java.util.concurrent.TimeoutException("no answer")))
                    .build();
            assertThat(open.acquireAsync("k").toCompletableFuture().join().allowed()).isTrue();
        }

        @Test
        void keepsTheKeyOutOfTheExceptionItsCauseAndTheLogWhenTheStoresMessageNamesIt() {
            RateLimiter closed = RateLimiter.builder().name("otp").clock(clock).onStoreFailure(FailurePolicy.FAIL_CLOSED)
                    .tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW))
                    .store(new RateLimitStore() {
                        @Override
                        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                            throw new UncheckedIOException("no answer for " + key,
                                    new java.io.IOException("reset while sending " + key));
                        }

                        @Override
                        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                            return CompletableFuture.failedFuture(new java.io.IOException("reset while sending " + key));
                        }
                    })
                    .build();

            List<LogRecord> lines = captureLog(() -> {
                assertThatThrownBy(() -> closed.acquire("+447700900123"))
                        .hasMessage("Rate limiter 'otp' could not decide: UncheckedIOException: no answer for <key>")
                        .satisfies(RateLimiterTest::namesNoKey);
                assertThatThrownBy(() -> closed.acquireAsync("+447700900123").toCompletableFuture().join())
                        .satisfies(RateLimiterTest::namesNoKey).cause()
                        .hasMessage("Rate limiter 'otp' could not decide: IOException: reset while sending <key>");
            });
            assertThat(lines).isNotEmpty().allSatisfy(line -> assertThat(line.getMessage()).doesNotContain("+4477"));
        }

        @Test
        void aStoresMessageQuotingWhatAClientSentStaysOnOneLogLine() {
            RateLimiter open = RateLimiter.builder().name("guarded").clock(clock).onStoreFailure(FailurePolicy.FAIL_OPEN)
                    .tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW))
                    .store(failingWith(new UncheckedIOException("no answer for tenant acme\r\nFORGED\u2028line",
                            new java.io.IOException())))
                    .build();

            List<LogRecord> lines = captureLog(() -> open.tryAcquire("k"));

            assertThat(lines).hasSize(1);
            assertThat(lines.get(0).getMessage()).doesNotContain("\r", "\n", "\u2028")
                    .contains("no answer for tenant acme\\r\\nFORGED\\u2028line");
        }

        @Test
        void malformedRequestsAreNeverTakenForOutages() {
            RateLimiter open = limiter(FailurePolicy.FAIL_OPEN);
            assertThatThrownBy(() -> open.acquire("k", 0)).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void logsTheFirstFailureAtOnceThenOneLineAnIntervalWithoutStackTracesOrKeys() {
            RateLimiter open = limiter(FailurePolicy.FAIL_OPEN);
            List<LogRecord> lines = captureLog(() -> {
                open.tryAcquire("+447700900123");
                for (int i = 0; i < 1_000; i++) {
                    open.tryAcquire("+447700900123");
                    clock.advanceMillis(9);
                }
                // 9 s after the first line: still within the interval.
                clock.advanceMillis(1_000);
                open.tryAcquire("+447700900123");
                open.acquireAsync("+447700900123").toCompletableFuture().join();
            });

            assertThat(lines).hasSize(2).allSatisfy(line -> {
                assertThat(line.getLevel()).isEqualTo(Level.WARNING);
                assertThat(line.getThrown()).isNull();
                assertThat(line.getMessage()).doesNotContain("+447700900123").contains("'guarded'", "FAIL_OPEN",
                        "admitted unchecked", "UncheckedIOException: connection refused");
            });
            assertThat(lines.get(0).getMessage()).contains("could not decide 1 call,");
            assertThat(lines.get(1).getMessage()).contains("could not decide 1001 calls in the last 10 s");
        }

        private RateLimitStore failingWith(Exception failure) {
            return new RateLimitStore() {
                @Override
                public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                    throw failure instanceof RuntimeException runtime ? runtime : new IllegalStateException(failure);
                }

                @Override
                public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                    return CompletableFuture.failedFuture(failure);
                }
            };
        }
    }

    private static void namesNoKey(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            assertThat(t.getMessage()).doesNotContain("+4477");
        }
    }

    @Test
    void anUnknownPlanAClientSentStaysOnOneLogLine() {
        RateLimiter limiter = limiter("plans").tier(Tier.of(2, ofMinutes(1), FIXED_WINDOW))
                .plan("gold", List.of(Tier.of(5, ofMinutes(1), FIXED_WINDOW))).build();

        List<LogRecord> lines = captureLog(() -> limiter.tryAcquire("k", 1, "gold\r\nFORGED: all limits are off"));

        assertThat(lines).hasSize(1);
        assertThat(lines.get(0).getMessage()).doesNotContain("\r", "\n")
                .contains("has no plan 'gold\\r\\nFORGED: all limits are off'");
    }

    /** The records the engine logs while {@code action} runs. */
    static List<LogRecord> captureLog(Runnable action) {
        Logger logger = Logger.getLogger("dev.sluice");
        List<LogRecord> records = new ArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(handler);
        try {
            action.run();
        } finally {
            logger.removeHandler(handler);
        }
        return records;
    }

    @Nested
    class Listening {

        private final List<String> events = new ArrayList<>();
        private final RateLimitListener recorder = new RateLimitListener() {
            @Override
            public void onDecision(RateLimiter limiter, String key, Decision decision) {
                events.add(limiter.name() + " " + key + " " + (decision.allowed() ? "allowed" : "rejected"));
            }

            @Override
            public void onStoreFailure(RateLimiter limiter, RuntimeException failure) {
                events.add(limiter.name() + " failed");
            }

            @Override
            public void onWait(RateLimiter limiter, Duration waited) {
                events.add(limiter.name() + " waited " + waited.toMillis());
            }
        };

        @Test
        void hearsTheOutcomeOfEachCallOnceEvenAfterWaiting() {
            RateLimiter partner = limiter("partner").tier(Tier.of(10, ofSeconds(1), TOKEN_BUCKET))
                    .onLimit(OnLimit.WAIT).maxWait(ofMillis(500)).listener(recorder).build();
            partner.acquire("k", 10);
            partner.acquire("k", 2);
            partner.acquireAsync("k", 2).toCompletableFuture().join();
            assertThatThrownBy(() -> partner.acquire("k", 10)).isInstanceOf(RateLimitExceededException.class);

            assertThat(events).containsExactly("partner k allowed", "partner waited 200", "partner k allowed",
                    "partner waited 200", "partner k allowed", "partner k rejected");
        }

        @Test
        void hearsStoreFailures() {
            RateLimiter failing = RateLimiter.builder().name("down").clock(clock).listener(recorder)
                    .tier(Tier.of(1, ofSeconds(1), FIXED_WINDOW))
                    .onStoreFailure(FailurePolicy.FAIL_OPEN)
                    .store(new RateLimitStore() {
                        @Override
                        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                            throw new UncheckedIOException("down", new ConnectException());
                        }

                        @Override
                        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                            return CompletableFuture.failedFuture(new UncheckedIOException("down", new ConnectException()));
                        }
                    })
                    .build();
            failing.acquire("k");
            assertThat(events).containsExactly("down failed", "down k allowed");
        }
    }

    @Nested
    class Building {

        @Test
        void requiresANameAStoreAndATier() {
            assertThatThrownBy(() -> RateLimiter.builder().store(store).tier(Tier.of(1, ofSeconds(1), FIXED_WINDOW))
                    .build()).hasMessageContaining("name");
            assertThatThrownBy(() -> RateLimiter.builder().name("x").tier(Tier.of(1, ofSeconds(1), FIXED_WINDOW))
                    .build()).hasMessageContaining("store");
            assertThatThrownBy(() -> RateLimiter.builder().name("x").store(store).build())
                    .hasMessageContaining("tier");
        }

        @Test
        void refusesInconsistentSettings() {
            Tier five = Tier.of(5, ofSeconds(1), FIXED_WINDOW);
            assertThatThrownBy(() -> limiter("x").tier(five).cost(6).build())
                    .hasMessageContaining("cost must be from 1 to the smallest limit (5), was 6");
            assertThatThrownBy(() -> limiter("x").tier(five).maxWait(ofSeconds(1)).build())
                    .hasMessageContaining("maxWait applies only with onLimit WAIT");
            assertThatThrownBy(() -> limiter("x").tier(five).tier(Tier.of(9, ofSeconds(1), FIXED_WINDOW)).build())
                    .hasMessageContaining("share algorithm and window");
        }

        /** Keeps only token buckets, as the distributed Bucket4j store does. */
        private final class TokenBucketsOnly implements RateLimitStore {

            @Override
            public java.util.Set<dev.sluice.annotation.Algorithm> supportedAlgorithms() {
                return java.util.Set.of(TOKEN_BUCKET);
            }

            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                RateLimitStore.check(this, key, tiers, cost);
                return store.tryAcquire(key, tiers, cost);
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                RateLimitStore.check(this, key, tiers, cost);
                return store.tryAcquireAsync(key, tiers, cost);
            }
        }

        @Test
        void refusesATierItsStoreCannotHonour() {
            Tier fixed = Tier.of(5, ofSeconds(1), FIXED_WINDOW);
            assertThatThrownBy(() -> limiter("x").store(new TokenBucketsOnly()).tier(fixed).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("TokenBucketsOnly does not support " + fixed + "; it supports [TOKEN_BUCKET]: use"
                            + " tiers the store supports, or a store that supports this one");
            assertThatThrownBy(() -> limiter("x").fallbackStore(new TokenBucketsOnly()).tier(fixed).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("TokenBucketsOnly does not support " + fixed + "; it supports [TOKEN_BUCKET]: use"
                            + " tiers the store supports, or a store that supports this one");
            limiter("x").fallbackStore(new TokenBucketsOnly()).onStoreFailure(FailurePolicy.FAIL_OPEN).tier(fixed)
                    .build();
            limiter("x").store(new TokenBucketsOnly()).tier(Tier.of(5, ofSeconds(1), TOKEN_BUCKET)).build();
        }

        @Test
        void refusesAMaxWaitNoClockCouldAddUp() {
            Tier five = Tier.of(5, ofSeconds(1), FIXED_WINDOW);
            Duration forever = java.time.temporal.ChronoUnit.FOREVER.getDuration();
            assertThatThrownBy(() -> limiter("x").tier(five).onLimit(OnLimit.WAIT).maxWait(forever).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("maxWait must be at most 2^52 ms (about 142,000 years), was " + forever);
            assertThatThrownBy(() -> limiter("x").tier(five).onLimit(OnLimit.WAIT).maxWait(ofMillis((1L << 52) + 1))
                    .build()).hasMessageContaining("maxWait must be at most 2^52 ms");

            RateLimiter longest = limiter("x").tier(Tier.of(1, ofSeconds(1), FIXED_WINDOW)).onLimit(OnLimit.WAIT)
                    .maxWait(ofMillis(1L << 52)).build();
            longest.acquire("k");
            longest.acquire("k");
            assertThat(sleeps).hasSize(1);
        }

        @Test
        void refusesANameThatCannotBeAPolicyNameInRateLimitHeaders() {
            assertThatThrownBy(() -> RateLimiter.builder().name("otp\r\nX-Injected: 1"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("name 'otp\\u000d\\u000aX-Injected: 1' has U+000D at index 3, which a policy name in"
                            + " RateLimit headers (an RFC 9651 string) cannot carry: use printable ASCII only"
                            + " (U+0020 to U+007E)");
            assertThatThrownBy(() -> RateLimiter.builder().name("caf\u00e9"))
                    .hasMessageStartingWith("name 'caf\u00e9' has U+00E9 at index 3");
            assertThatThrownBy(() -> RateLimiter.builder().name("tab\tbed")).hasMessageContaining("U+0009");
            assertThatThrownBy(() -> RateLimiter.builder().name("del\u007f")).hasMessageContaining("U+007F");

            RateLimiter quoted = limiter("say \"hi\" \\ ~").tier(Tier.of(1, ofSeconds(1), FIXED_WINDOW)).build();
            assertThat(quoted.name()).isEqualTo("say \"hi\" \\ ~");
        }
    }

    @Test
    void tiersRefuseFiguresNoStoreCouldKeepExact() {
        assertThatThrownBy(() -> Tier.of(0, ofSeconds(1), FIXED_WINDOW)).hasMessageContaining("limit must be positive");
        assertThatThrownBy(() -> Tier.of(1, Duration.ofNanos(1_500_000), FIXED_WINDOW))
                .hasMessageContaining("whole milliseconds");
        assertThatThrownBy(() -> Tier.of(1L << 40, Duration.ofDays(1), FIXED_WINDOW))
                .hasMessageContaining("2^52");
    }
}
