package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A store that refuses calls because too many are waiting for it ({@link StoreOverloadedException})
 * has a spike, not an outage: its limiter rejects those calls, whatever its failure policy and
 * outage settings, and tells its listeners of a rejection, not of a store failure.
 */
class StoreOverloadTest {

    /** The tightest tier: the smallest limit. */
    private static final Tier PER_MINUTE = Tier.of(10, ofMinutes(1), SLIDING_WINDOW);
    private static final Tier PER_HOUR = Tier.of(100, ofHours(1), FIXED_WINDOW);
    private static final Duration RETRY_AFTER = ofMillis(250);

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
    private final StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1).clock(clock)
            .recordExceptions(RuntimeException.class).build();
    private final Heard heard = new Heard();
    /** The waits the limiter slept, each moving the clock. */
    private final List<Duration> slept = Collections.synchronizedList(new ArrayList<>());
    private final Sleeper sleeper = new Sleeper() {
        @Override
        public void sleep(Duration duration) {
            slept.add(duration);
            millis.addAndGet(duration.toMillis());
        }

        @Override
        public CompletionStage<Void> sleepAsync(Duration duration) {
            sleep(duration);
            return CompletableFuture.completedFuture(null);
        }
    };

    /**
     * The in-memory store behind a queue that overflows: the next {@code overloads} calls are
     * refused with {@code retryAfter}, the others decided. Its breaker hears of each refusal, as
     * a store reporting every outcome would tell it.
     */
    private final class OverloadedStore extends ForwardingRateLimitStore {

        final AtomicInteger overloads = new AtomicInteger(Integer.MAX_VALUE);
        volatile Duration retryAfter = RETRY_AFTER;
        /** Whether asynchronous calls throw at once rather than fail their stage. */
        volatile boolean throwsAsync;

        OverloadedStore() {
            super(memory);
        }

        private void refuseIfOverloaded() {
            if (overloads.getAndDecrement() > 0) {
                StoreCircuitBreaker.Permit permit = breaker.tryAcquirePermit();
                StoreOverloadedException overload = new StoreOverloadedException("20000 decisions queued", retryAfter);
                if (permit != null) {
                    permit.onFailure(overload);
                }
                throw overload;
            }
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            refuseIfOverloaded();
            return super.tryAcquire(key, tiers, cost);
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            return async(() -> super.tryAcquire(key, tiers, cost));
        }

        @Override
        public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
            refuseIfOverloaded();
            return super.reserve(key, tiers, cost, maxWait);
        }

        @Override
        public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
            return async(() -> super.reserve(key, tiers, cost, maxWait));
        }

        private <T> CompletionStage<T> async(Supplier<T> decided) {
            if (throwsAsync) {
                refuseIfOverloaded();
                return CompletableFuture.completedFuture(decided.get());
            }
            try {
                refuseIfOverloaded();
            } catch (StoreOverloadedException overload) {
                return CompletableFuture.failedFuture(overload);
            }
            return CompletableFuture.completedFuture(decided.get());
        }

        @Override
        public Optional<StoreCircuitBreaker> circuitBreaker() {
            return Optional.of(breaker);
        }
    }

    /** What the listeners heard. */
    private static final class Heard implements RateLimitListener {

        final List<Decision> decisions = Collections.synchronizedList(new ArrayList<>());
        final List<Decision> overloads = Collections.synchronizedList(new ArrayList<>());
        final List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void onDecision(RateLimiter limiter, String key, Decision decision) {
            decisions.add(decision);
        }

        @Override
        public void onStoreOverloaded(RateLimiter limiter, String key, Decision decision,
                                      StoreOverloadedException overload) {
            overloads.add(decision);
        }

        @Override
        public void onStoreFailure(RateLimiter limiter, RuntimeException failure) {
            failures.add(failure);
        }
    }

    private final OverloadedStore store = new OverloadedStore();

    private RateLimiter.Builder limiter(FailurePolicy policy) {
        return RateLimiter.builder().name("api").store(store).clock(clock).sleeper(sleeper)
                .tier(PER_HOUR).tier(PER_MINUTE).onStoreFailure(policy).listener(heard);
    }

    private static Decision overloaded(Duration retryAfter) {
        return new Decision(false, 10, 0, retryAfter, retryAfter, ofMinutes(1));
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void aDecisionIsARejectionWithTheTightestTiersFiguresWhateverTheFailurePolicy(FailurePolicy policy) {
        RateLimiter limiter = limiter(policy).build();

        assertThat(limiter.tryAcquire("k")).isEqualTo(overloaded(RETRY_AFTER));

        assertThat(heard.overloads).containsExactly(overloaded(RETRY_AFTER));
        assertThat(heard.decisions).as("told as an overload, not as a decision besides").isEmpty();
        assertThat(heard.failures).as("no store failure").isEmpty();
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void aCallerThatDoesNotWaitGetsARejectionSayingTheStoreWasOverloaded(FailurePolicy policy) {
        RateLimiter limiter = limiter(policy).message("Daily quota reached").build();

        RateLimitExceededException rejection = catchThrowableOfType(RateLimitExceededException.class,
                () -> limiter.acquire("k"));

        assertThat(rejection.overloaded()).isTrue();
        assertThat(rejection.reason()).isEqualTo(RateLimitExceededException.STORE_OVERLOADED)
                .isEqualTo("Rate limit store overloaded");
        assertThat(rejection.getMessage()).startsWith("Rate limit store overloaded (limiter 'api'");
        assertThat(rejection.getCause()).isInstanceOf(StoreOverloadedException.class)
                .hasMessage("20000 decisions queued");
        assertThat(rejection.decision()).isEqualTo(overloaded(RETRY_AFTER));
        assertThat(rejection.retryAfter()).isEqualTo(RETRY_AFTER);
        assertThat(rejection.limiterName()).isEqualTo("api");
        assertThat(rejection.key()).isEqualTo("k");
        assertThat(heard.overloads).hasSize(1);
        assertThat(heard.failures).isEmpty();
    }

    @ParameterizedTest(name = "thrown at once: {0}")
    @ValueSource(booleans = {false, true})
    void anAsynchronousCallerGetsTheSameRejection(boolean throwsAsync) {
        store.throwsAsync = throwsAsync;
        RateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED).build();

        assertThatThrownBy(() -> limiter.acquireAsync("k").toCompletableFuture().join())
                .isInstanceOf(CompletionException.class)
                .cause().isInstanceOfSatisfying(RateLimitExceededException.class, rejection -> {
                    assertThat(rejection.overloaded()).isTrue();
                    assertThat(rejection.decision()).isEqualTo(overloaded(RETRY_AFTER));
                });
        assertThat(heard.overloads).hasSize(1);
        assertThat(heard.failures).isEmpty();
    }

    @Test
    void aLimitersOwnRejectionIsNotAnOverload() {
        store.overloads.set(0);
        RateLimiter limiter = RateLimiter.builder().name("api").store(store).clock(clock)
                .tier(Tier.of(1, ofMinutes(1), SLIDING_WINDOW)).build();
        limiter.acquire("k");

        RateLimitExceededException rejection = catchThrowableOfType(RateLimitExceededException.class,
                () -> limiter.acquire("k"));

        assertThat(rejection.overloaded()).isFalse();
        assertThat(rejection.getCause()).isNull();
        assertThat(rejection.reason()).isEqualTo("Rate limit exceeded");
    }

    @Test
    void noOutageSettingOfTheLimiterMakesAnOverloadAStoreFailure() {
        RateLimiter recording = limiter(FailurePolicy.FAIL_OPEN).recordExceptions(StoreOverloadedException.class)
                .recordException(failure -> true).build();
        RateLimiter ignoring = limiter(FailurePolicy.FAIL_OPEN).ignoreExceptions(StoreOverloadedException.class)
                .name("ignoring").build();

        assertThat(recording.tryAcquire("k")).as("not admitted by FAIL_OPEN").isEqualTo(overloaded(RETRY_AFTER));
        assertThat(ignoring.tryAcquire("k")).as("not thrown to the caller").isEqualTo(overloaded(RETRY_AFTER));
        assertThat(heard.failures).isEmpty();
    }

    @Test
    void aRegistrysOutageSettingsDoNotMakeItAStoreFailureEither() {
        RateLimiterRegistry registry = RateLimiterRegistry.builder().store(store).clock(clock)
                .onStoreFailure(FailurePolicy.FAIL_CLOSED).recordExceptions(RuntimeException.class)
                .listener(heard).build();
        RateLimiter limiter = registry.limiterBuilder().name("api").tier(PER_MINUTE).build();

        assertThatThrownBy(() -> limiter.acquire("k")).isInstanceOf(RateLimitExceededException.class);
        assertThat(heard.failures).isEmpty();
    }

    @Test
    void anOverloadNeverOpensTheStoresBreakerEvenWhenItRecordsEveryException() {
        RateLimiter limiter = limiter(FailurePolicy.LOCAL_FALLBACK).build();

        for (int call = 0; call < 30; call++) {
            limiter.tryAcquire("k");
        }

        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.CLOSED);
        assertThat(breaker.isOutage(new StoreOverloadedException("queue full", RETRY_AFTER))).isFalse();
    }

    @Test
    void aListenerThatOnlyHearsDecisionsHearsARejection() {
        List<Decision> decisions = new ArrayList<>();
        RateLimiter limiter = RateLimiter.builder().name("api").store(store).clock(clock).tier(PER_MINUTE)
                .listener(new RateLimitListener() {
                    @Override
                    public void onDecision(RateLimiter limiter, String key, Decision decision) {
                        decisions.add(decision);
                    }
                }).build();

        limiter.tryAcquire("k");

        assertThat(decisions).containsExactly(overloaded(RETRY_AFTER));
    }

    @Test
    void aCallerThatWaitsWaitsTheStoresRetryAfterAndAsksAgain() {
        store.overloads.set(2);
        RateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED).onLimit(OnLimit.WAIT).maxWait(ofSeconds(1)).build();

        Decision admitted = limiter.acquire("k");

        assertThat(admitted.allowed()).isTrue();
        assertThat(slept).containsExactly(RETRY_AFTER, RETRY_AFTER);
        assertThat(heard.decisions).containsExactly(admitted);
        assertThat(heard.overloads).as("only the outcome is told").isEmpty();
        assertThat(heard.failures).isEmpty();
    }

    @Test
    void anAsynchronousCallerThatWaitsWaitsTheStoresRetryAfterAndAsksAgain() {
        store.overloads.set(2);
        RateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED).onLimit(OnLimit.WAIT).maxWait(ofSeconds(1)).build();

        Decision admitted = limiter.acquireAsync("k").toCompletableFuture().join();

        assertThat(admitted.allowed()).isTrue();
        assertThat(slept).containsExactly(RETRY_AFTER, RETRY_AFTER);
        assertThat(heard.failures).isEmpty();
    }

    @Test
    void aCallerThatCannotWaitAsLongAsTheStoreSaysIsRejectedAtOnce() {
        store.retryAfter = ofSeconds(2);
        RateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN).onLimit(OnLimit.WAIT).maxWait(ofSeconds(1)).build();

        RateLimitExceededException rejection = catchThrowableOfType(RateLimitExceededException.class,
                () -> limiter.acquire("k"));
        assertThatThrownBy(() -> limiter.acquireAsync("k").toCompletableFuture().join())
                .cause().isInstanceOfSatisfying(RateLimitExceededException.class,
                        async -> assertThat(async.overloaded()).isTrue());

        assertThat(rejection.overloaded()).isTrue();
        assertThat(rejection.decision()).isEqualTo(overloaded(ofSeconds(2)));
        assertThat(slept).isEmpty();
        assertThat(heard.overloads).hasSize(2);
        assertThat(heard.failures).isEmpty();
    }

    @Test
    void aCallerThatWaitedUntilItsMaxWaitIsRejectedAsOverloadedWhenTheStoreStillWas() {
        RateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN).onLimit(OnLimit.WAIT).maxWait(ofMillis(600)).build();

        RateLimitExceededException rejection = catchThrowableOfType(RateLimitExceededException.class,
                () -> limiter.acquire("k"));

        assertThat(rejection.overloaded()).isTrue();
        assertThat(slept).containsExactly(RETRY_AFTER, RETRY_AFTER);
        assertThat(heard.overloads).containsExactly(overloaded(RETRY_AFTER));
    }
}
