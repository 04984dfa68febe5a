package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.FailurePolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Which exceptions of a store are outages, taking the failure policy and opening the breaker,
 * and which reach the caller: as Resilience4j's circuit breaker records and ignores exceptions.
 */
class StoreOutageExceptionsTest {

    private static final Tier TIER = Tier.of(10, ofMinutes(1), FIXED_WINDOW);

    /** A business error of a user's store: no outage once ignored. */
    static final class QuotaServiceRefused extends RuntimeException {
        QuotaServiceRefused() {
            super("refused");
        }
    }

    /** A custom store guarded by a breaker as {@link StoreCircuitBreaker} shows, failing as told. */
    static class FailingStore implements RateLimitStore {

        private final StoreCircuitBreaker breaker;
        private final Supplier<RuntimeException> failure;

        FailingStore(StoreCircuitBreaker breaker, Supplier<RuntimeException> failure) {
            this.breaker = breaker;
            this.failure = failure;
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            StoreCircuitBreaker.Permit permit = breaker.tryAcquirePermit();
            if (permit == null) {
                throw breaker.rejection();
            }
            RuntimeException failed = failure.get();
            permit.onFailure(failed);
            throw failed;
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            try {
                return CompletableFuture.completedFuture(tryAcquire(key, tiers, cost));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        @Override
        public Optional<StoreCircuitBreaker> circuitBreaker() {
            return Optional.of(breaker);
        }
    }

    private static RateLimiter limiter(RateLimitStore store, FailurePolicy policy) {
        return RateLimiter.builder().name("api").store(store).tier(TIER).onStoreFailure(policy).build();
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void aNullPointerExceptionOfACustomStoreReachesTheCallerAndDoesNotOpenTheBreaker(FailurePolicy policy) {
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1).build();
        RateLimiter limiter = limiter(new FailingStore(breaker, () -> new NullPointerException("a bug")), policy);

        for (int call = 0; call < 3; call++) {
            assertThatThrownBy(() -> limiter.tryAcquire("k")).isInstanceOf(NullPointerException.class)
                    .hasMessage("a bug");
            assertThatThrownBy(() -> limiter.acquireAsync("k").toCompletableFuture().join())
                    .isInstanceOf(CompletionException.class).hasCauseInstanceOf(NullPointerException.class);
        }
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.CLOSED);
    }

    @Test
    void otherProgrammingErrorsReachTheCallerToo() {
        for (RuntimeException bug : List.of(new IllegalArgumentException(), new IllegalStateException(),
                new UnsupportedOperationException(), new ClassCastException())) {
            StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1).build();
            RateLimiter limiter = limiter(new FailingStore(breaker, () -> bug), FailurePolicy.FAIL_OPEN);
            assertThatThrownBy(() -> limiter.tryAcquire("k")).isSameAs(bug);
            assertThat(breaker.state()).as("after %s", bug).isEqualTo(StoreCircuitBreaker.State.CLOSED);
        }
    }

    @Test
    void anOutageTakesThePolicyAndOpensTheBreaker() {
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1).build();
        RateLimiter limiter = limiter(new FailingStore(breaker,
                () -> new UncheckedIOException(new IOException("connection reset"))), FailurePolicy.FAIL_OPEN);

        assertThat(limiter.tryAcquire("k").allowed()).as("admitted by the policy").isTrue();
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.OPEN);
    }

    @Test
    void anIgnorePredicateOfTheBreakerIsHonouredByItAndByTheLimiter() {
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1)
                .ignoreException(e -> e instanceof QuotaServiceRefused).build();
        RateLimiter limiter = limiter(new FailingStore(breaker, QuotaServiceRefused::new), FailurePolicy.FAIL_OPEN);

        assertThatThrownBy(() -> limiter.tryAcquire("k")).isInstanceOf(QuotaServiceRefused.class);
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.CLOSED);
    }

    @Test
    void recordedExceptionsAreTheOnlyOutagesAndTheOthersCountAsAnswers() {
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1)
                .recordExceptions(UncheckedIOException.class).build();
        RateLimiter limiter = limiter(new FailingStore(breaker, QuotaServiceRefused::new), FailurePolicy.FAIL_OPEN);
        assertThatThrownBy(() -> limiter.tryAcquire("k")).isInstanceOf(QuotaServiceRefused.class);
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.CLOSED);

        StoreCircuitBreaker byPredicate = StoreCircuitBreaker.builder().failureThreshold(1)
                .recordException(e -> e instanceof QuotaServiceRefused).build();
        RateLimiter limited = limiter(new FailingStore(byPredicate, QuotaServiceRefused::new), FailurePolicy.FAIL_OPEN);
        assertThat(limited.tryAcquire("k").allowed()).as("admitted by the policy").isTrue();
        assertThat(byPredicate.state()).isEqualTo(StoreCircuitBreaker.State.OPEN);
    }

    @Test
    void aStoreUnavailableExceptionIsAlwaysAnOutage() {
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1)
                .recordExceptions(UncheckedIOException.class)
                .ignoreException(e -> true).build();
        RateLimiter limiter = limiter(new FailingStore(breaker,
                () -> new StoreUnavailableException("down", ofSeconds(1))), FailurePolicy.FAIL_OPEN);

        assertThat(limiter.tryAcquire("k").allowed()).isTrue();
        assertThat(breaker.state()).isEqualTo(StoreCircuitBreaker.State.OPEN);
    }

    @Test
    void theLimiterAndTheRegistryCanSayWhatAnOutageIsForAStoreWithoutABreaker() {
        RateLimitStore failing = new FailingStore(StoreCircuitBreaker.builder().build(), QuotaServiceRefused::new) {
            @Override
            public Optional<StoreCircuitBreaker> circuitBreaker() {
                return Optional.empty();
            }
        };
        assertThat(limiter(failing, FailurePolicy.FAIL_OPEN).tryAcquire("k").allowed()).as("by default an outage").isTrue();

        RateLimiter ignoring = RateLimiter.builder().name("api").store(failing).tier(TIER)
                .onStoreFailure(FailurePolicy.FAIL_OPEN).ignoreExceptions(QuotaServiceRefused.class).build();
        assertThatThrownBy(() -> ignoring.tryAcquire("k")).isInstanceOf(QuotaServiceRefused.class);

        RateLimiterRegistry registry = RateLimiterRegistry.builder().store(failing).onStoreFailure(FailurePolicy.FAIL_OPEN)
                .recordExceptions(SocketTimeoutException.class).build();
        RateLimiter registered = registry.limiterBuilder().name("api").tier(TIER).build();
        assertThatThrownBy(() -> registered.tryAcquire("k")).isInstanceOf(QuotaServiceRefused.class);
    }
}
