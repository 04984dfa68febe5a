package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A caller that gives up while it sleeps for a permit stops its sleep: the sleeper's timer does not
 * fire, minutes later, for a caller that went away.
 */
class CancelledWaitTest {

    private final Instant now = Instant.parse("2400-01-01T00:00:00Z");
    /** The sleep the caller is in; it ends only when cancelled. */
    private final CompletableFuture<Void> sleep = new CompletableFuture<>();
    /** Completes once the caller has gone to sleep. */
    private final CompletableFuture<Void> asleep = new CompletableFuture<>();
    private final Sleeper sleeper = new Sleeper() {
        @Override
        public void sleep(Duration duration) {
            throw new AssertionError("the test waits asynchronously");
        }

        @Override
        public CompletionStage<Void> sleepAsync(Duration duration) {
            asleep.complete(null);
            return sleep;
        }
    };

    @Test
    void aCallerThatGivesUpWhileItWaitsForAReservedPermitStopsItsSleep() {
        RateLimiter partner = limiter(Tier.of(1, Duration.ofHours(1), Algorithm.TOKEN_BUCKET));
        partner.acquire("api");
        CompletableFuture<Decision> waiting = partner.acquireAsync("api").toCompletableFuture();
        assertThat(asleep).succeedsWithin(Duration.ofSeconds(10));
        assertThat(waiting).isNotDone();

        waiting.cancel(false);
        // The caller's thread may record its sleep just after the cancellation: it stops it then.
        assertThatThrownBy(() -> sleep.get(10, TimeUnit.SECONDS)).as("the caller's sleep")
                .isInstanceOf(CancellationException.class);
    }

    @Test
    void aCallerThatGivesUpWhileItWaitsForARunningCallStopsItsSleep() {
        RateLimiter exports = limiter(Tier.concurrency(1, Duration.ofSeconds(30)));
        exports.acquire("acme");
        CompletableFuture<Decision> waiting = exports.acquireAsync("acme").toCompletableFuture();
        assertThat(asleep).succeedsWithin(Duration.ofSeconds(10));
        assertThat(waiting).isNotDone();

        waiting.cancel(false);
        // The caller's thread may record its sleep just after the cancellation: it stops it then.
        assertThatThrownBy(() -> sleep.get(10, TimeUnit.SECONDS)).as("the caller's sleep")
                .isInstanceOf(CancellationException.class);
    }

    private RateLimiter limiter(Tier tier) {
        return RateLimiter.builder().name("partner")
                .store(InMemoryRateLimitStore.builder().clock(() -> now).build())
                .clock(() -> now)
                .sleeper(sleeper)
                .tier(tier)
                .onLimit(OnLimit.WAIT)
                .maxWait(Duration.ofHours(2))
                .build();
    }
}
