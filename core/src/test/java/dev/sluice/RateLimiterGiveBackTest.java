package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.FailurePolicy;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Giving back the permits of a call through its limiter, which counts calls by their outcome: a
 * store that cannot be reached never fails the caller, and the failure policy says where the
 * permits go back to.
 */
class RateLimiterGiveBackTest {

    private static final Tier OTP = Tier.of(3, ofMinutes(1), FIXED_WINDOW);

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:10Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
    private final List<RuntimeException> failures = new ArrayList<>();

    private RateLimiter.Builder limiter(RateLimitStore store) {
        return RateLimiter.builder().name("otp").store(store).clock(clock).tier(OTP)
                .listener(new RateLimitListener() {
                    @Override
                    public void onStoreFailure(RateLimiter limiter, RuntimeException failure) {
                        failures.add(failure);
                    }
                });
    }

    private static void admitThree(RateLimiter limiter, String key) {
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.tryAcquire(key).allowed()).as("call %d", i + 1).isTrue();
        }
        assertThat(limiter.tryAcquire(key).allowed()).as("the fourth").isFalse();
    }

    @Test
    void aCallGivenBackNoLongerCounts() {
        RateLimiter otp = limiter(memory).build();
        Instant admittedAt = clock.instant();
        admitThree(otp, "203.0.113.9");
        millis.addAndGet(5_000);

        assertThat(otp.givesBack()).isTrue();
        otp.giveBack("203.0.113.9", 1, null, admittedAt);
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).isTrue();
        otp.giveBackAsync("203.0.113.9", 1, null, admittedAt).toCompletableFuture().join();
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).isTrue();
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).isFalse();
    }

    @Test
    void theKeyIsQualifiedByTheLimitersNameAsForDecisions() {
        RateLimiter otp = limiter(memory).build();
        RateLimiter login = RateLimiter.builder().name("login").store(memory).clock(clock).tier(OTP).build();
        Instant admittedAt = clock.instant();
        admitThree(otp, "alice");
        admitThree(login, "alice");

        otp.giveBack("alice", 1, null, admittedAt);

        assertThat(otp.tryAcquire("alice").allowed()).isTrue();
        assertThat(login.tryAcquire("alice").allowed()).as("another limiter's key of the same name").isFalse();
    }

    @ParameterizedTest
    @EnumSource(value = FailurePolicy.class, names = {"FAIL_OPEN", "FAIL_CLOSED"})
    void anOutageNeverFailsTheCallerAndTheCallStaysCounted(FailurePolicy policy) {
        SwitchableStore store = new SwitchableStore(memory);
        RateLimiter otp = limiter(store).onStoreFailure(policy).build();
        Instant admittedAt = clock.instant();
        admitThree(otp, "203.0.113.9");

        store.up = false;
        otp.giveBack("203.0.113.9", 1, null, admittedAt);
        assertThat(otp.giveBackAsync("203.0.113.9", 1, null, admittedAt).toCompletableFuture().join()).isNull();
        assertThat(failures).as("heard as store failures").hasSize(2)
                .allMatch(failure -> failure instanceof StoreUnavailableException);

        store.up = true;
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).as("the calls stayed counted").isFalse();
    }

    @Test
    void underLocalFallbackTheFallbackStoreGetsThePermitsBack() {
        SwitchableStore store = new SwitchableStore(memory);
        RateLimiter otp = limiter(store).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();
        Instant admittedAt = clock.instant();
        store.up = false;
        admitThree(otp, "203.0.113.9");

        otp.giveBack("203.0.113.9", 1, null, admittedAt);
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).as("decided by the fallback store").isTrue();
        otp.giveBackAsync("203.0.113.9", 1, null, admittedAt).toCompletableFuture().join();
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).isTrue();
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).isFalse();
        assertThat(failures).as("every decision and give-back").hasSize(4 + 3 + 2);

        store.up = true;
        assertThat(memory.tryAcquire("otp:203.0.113.9", List.of(OTP), 3).allowed()).as("the store itself counted nothing")
                .isTrue();
    }

    @Test
    void aStoreThatCannotGiveBackSaysSoAndItsLimiterRefuses() {
        RateLimitStore custom = new RateLimitStore() {
            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                return memory.tryAcquire(key, tiers, cost);
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                return memory.tryAcquireAsync(key, tiers, cost);
            }
        };
        RateLimiter otp = limiter(custom).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();
        Instant admittedAt = clock.instant();
        admitThree(otp, "alice");

        assertThat(otp.givesBack()).isFalse();
        assertThatThrownBy(() -> otp.giveBack("alice", 1, null, admittedAt))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessage(custom.getClass().getName() + " cannot give permits back");
        assertThatThrownBy(() -> otp.giveBackAsync("alice", 1, null, admittedAt).toCompletableFuture().join())
                .isInstanceOf(CompletionException.class).hasCauseInstanceOf(UnsupportedOperationException.class);
        assertThat(failures).as("no store failure").isEmpty();
        assertThat(otp.tryAcquire("alice").allowed()).as("nothing given back").isFalse();
    }

    @Test
    void aMalformedGiveBackReachesTheCaller() {
        RateLimiter otp = limiter(memory).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();

        assertThatThrownBy(() -> otp.giveBack("alice", 4, null, clock.instant()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost");
        assertThat(failures).isEmpty();
    }

    @Test
    void aCallAdmittedLaterThanNowIsGivenBackAsIfJustNow() {
        RateLimiter otp = limiter(memory).build();
        admitThree(otp, "alice");

        otp.giveBack("alice", 1, null, clock.instant().plus(ofHours(1)));
        assertThat(otp.tryAcquire("alice").allowed()).isTrue();
    }
}
