package dev.sluice;

import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.FailurePolicy;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Forgetting a key through its limiter: how an operator unblocks a caller. */
class RateLimiterResetTest {

    private static final Tier OTP = Tier.of(3, ofMinutes(1), SLIDING_WINDOW).withBlockFor(ofMinutes(15));

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();

    private RateLimiter.Builder limiter(String name, RateLimitStore store) {
        return RateLimiter.builder().name(name).store(store).clock(clock).tier(OTP);
    }

    private static void block(RateLimiter limiter, String key) {
        for (int i = 0; i < 4; i++) {
            limiter.tryAcquire(key);
        }
        assertThat(limiter.tryAcquire(key).retryAfter()).as("blocked").isEqualTo(ofMinutes(15));
    }

    @Test
    void aBlockedKeyIsAdmittedAgainWithItsWholeLimitAndOtherKeysStayBlocked() {
        RateLimiter otp = limiter("otp", memory).build();
        block(otp, "203.0.113.9");
        block(otp, "203.0.113.10");

        otp.reset("203.0.113.9");

        assertThat(otp.tryAcquire("203.0.113.9").remaining()).isEqualTo(2);
        assertThat(otp.tryAcquire("203.0.113.10").allowed()).isFalse();
    }

    @Test
    void theKeyIsQualifiedByTheLimitersNameAsForDecisions() {
        RateLimiter otp = limiter("otp", memory).build();
        RateLimiter login = limiter("login", memory).build();
        block(otp, "alice");
        block(login, "alice");

        otp.reset("alice");

        assertThat(otp.tryAcquire("alice").allowed()).isTrue();
        assertThat(login.tryAcquire("alice").allowed()).as("another limiter's key of the same name").isFalse();
    }

    @Test
    void theLocalFallbackStoreForgetsTheKeyTooEvenWhenTheStoreCannotBeReached() {
        SwitchableStore store = new SwitchableStore(memory);
        RateLimiter otp = limiter("otp", store).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();
        block(otp, "203.0.113.9");
        store.up = false;
        block(otp, "203.0.113.9");

        assertThatThrownBy(() -> otp.reset("203.0.113.9")).isInstanceOf(StoreUnavailableException.class);
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).as("decided locally, while the store is down").isTrue();

        store.up = true;
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).as("the store itself was not reached").isFalse();
        otp.reset("203.0.113.9");
        assertThat(otp.tryAcquire("203.0.113.9").allowed()).isTrue();
    }

    @Test
    void aStoreThatCannotForgetKeysSaysSoByName() {
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
        RateLimiter otp = limiter("otp", custom).onStoreFailure(FailurePolicy.FAIL_CLOSED).build();

        assertThatThrownBy(() -> otp.reset("alice")).isInstanceOf(UnsupportedOperationException.class)
                .hasMessage(custom.getClass().getName() + " cannot reset a key");
    }
}
