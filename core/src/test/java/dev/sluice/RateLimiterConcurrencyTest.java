package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A limiter with a concurrency tier: callers that wait for a permit are woken when a call of
 * their key ends in this instance, not at their next try. The sleeper here never wakes on its
 * own, so a caller that was not woken would wait until the test gives up.
 */
class RateLimiterConcurrencyTest {

    /** Sleeps until woken, for at most 20 s whatever it is asked: a caller never asks again on a timer. */
    private static final Sleeper WOKEN_ONLY = new Sleeper() {
        @Override
        public void sleep(Duration duration) {
            throw new AssertionError("a caller waiting for a running call sleeps until woken");
        }

        @Override
        public void sleep(Duration duration, CompletionStage<?> wakeUp) throws InterruptedException {
            try {
                wakeUp.toCompletableFuture().get(20, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new AssertionError("never woken", e);
            }
        }

        @Override
        public CompletionStage<Void> sleepAsync(Duration duration, CompletionStage<?> wakeUp) {
            return wakeUp.toCompletableFuture().orTimeout(20, TimeUnit.SECONDS).thenApply(woken -> null);
        }
    };

    private final Instant start = Instant.parse("2400-01-01T00:00:00Z");
    private final RateLimiter exports = RateLimiter.builder()
            .name("exports")
            .store(InMemoryRateLimitStore.builder().clock(() -> start).build())
            .clock(() -> start)
            .sleeper(WOKEN_ONLY)
            .tier(Tier.concurrency(1, Duration.ofSeconds(30)))
            .onLimit(OnLimit.WAIT)
            .maxWait(Duration.ofMinutes(1))
            .build();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    void aBlockedCallerIsWokenWhenTheRunningCallEnds() throws Exception {
        exports.acquire("acme");
        Future<Decision> waiting = pool.submit(() -> exports.acquire("acme"));
        assertThatThrownBy(() -> waiting.get(200, TimeUnit.MILLISECONDS)).as("waits while the call runs")
                .isInstanceOf(java.util.concurrent.TimeoutException.class);

        exports.release("acme", 1, null, start);
        assertThat(waiting.get(10, TimeUnit.SECONDS).allowed()).isTrue();
    }

    @Test
    void anAsynchronousCallerIsWokenWhenTheRunningCallEnds() throws Exception {
        exports.acquire("acme");
        CompletableFuture<Decision> waiting = exports.acquireAsync("acme").toCompletableFuture();
        assertThatThrownBy(() -> waiting.get(200, TimeUnit.MILLISECONDS)).as("waits while the call runs")
                .isInstanceOf(java.util.concurrent.TimeoutException.class);

        exports.releaseAsync("acme", 1, null, start).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(waiting.get(10, TimeUnit.SECONDS).allowed()).isTrue();
    }
}
