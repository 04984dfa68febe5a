package dev.sluice.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import dev.sluice.tck.MutableClock;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code @RateLimited(concurrency = N)}: a call holds its permit for exactly as long as it runs,
 * whatever its shape and however it ends, and the permit goes back when it does.
 */
class ConcurrencyLimitsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2400-03-01T10:00:00Z"));
    private final MethodRateLimiter limits = MethodRateLimiter.builder().registry(RateLimiterRegistry.builder()
            .store(InMemoryRateLimitStore.builder().clock(clock).build())
            .clock(clock)
            .build()).build();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @SuppressWarnings("unchecked")
    private <T> T call(Object target, String methodName, Object... args) throws Throwable {
        Method method = null;
        for (Method declared : target.getClass().getDeclaredMethods()) {
            if (declared.getName().equals(methodName)) {
                method = declared;
            }
        }
        Method found = method;
        return (T) limits.invoke(found, target, target.getClass(), args, () -> {
            try {
                return found.invoke(target, args);
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getTargetException();
            }
        });
    }

    /** Calls a limited method on a thread of the pool. */
    private <T> Future<T> inBackground(Object target, String methodName, Object... args) {
        return pool.submit(() -> {
            try {
                return this.<T>call(target, methodName, args);
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        });
    }

    /** Exports per tenant: at most two at once, and a rate beside it on another method. */
    static class Exports {
        final CountDownLatch started = new CountDownLatch(2);
        final CountDownLatch finish = new CountDownLatch(1);

        @RateLimited(key = "#tenant", concurrency = 2)
        public String run(String tenant) throws InterruptedException {
            started.countDown();
            assertThat(finish.await(10, TimeUnit.SECONDS)).isTrue();
            return "exported";
        }

        @RateLimited(key = "#tenant", concurrency = 1)
        public String failing(String tenant) {
            throw new IllegalStateException("export failed");
        }

        @RateLimited(key = "#tenant", concurrency = 1, limit = 2, window = "1m")
        public String ratedToo(String tenant) {
            return "done";
        }

        @RateLimited(key = "#tenant", concurrency = 1)
        public CompletionStage<String> later(String tenant, CompletableFuture<String> result) {
            return result;
        }

        @RateLimited(key = "#tenant", concurrency = 1)
        public Mono<String> reactive(String tenant, Mono<String> result) {
            return result;
        }

        @RateLimited(key = "#tenant", concurrency = 1)
        public Flux<String> stream(String tenant, Flux<String> result) {
            return result;
        }

        @RateLimited(key = "#tenant", concurrency = 1, onLimit = OnLimit.WAIT, maxWait = "10s")
        public String queued(String tenant, CountDownLatch running, CountDownLatch release)
                throws InterruptedException {
            running.countDown();
            assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
            return "queued";
        }
    }

    @Test
    void admitsTheConcurrencyRunningAtOnceAndAnotherOnceOneEnds() throws Throwable {
        Exports exports = new Exports();
        Future<String> first = inBackground(exports, "run", "acme");
        Future<String> second = inBackground(exports, "run", "acme");
        assertThat(exports.started.await(10, TimeUnit.SECONDS)).isTrue();

        assertThatThrownBy(() -> call(exports, "run", "acme")).isInstanceOf(RateLimitExceededException.class)
                .satisfies(rejection -> {
                    RateLimitExceededException exceeded = (RateLimitExceededException) rejection;
                    assertThat(exceeded.decision().concurrency()).as("rejected for concurrency").isTrue();
                    assertThat(exceeded.decision().limit()).isEqualTo(2);
                });

        exports.finish.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("exported");
        assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("exported");
        assertThat((String) call(exports, "run", "acme")).as("both permits back").isEqualTo("exported");
        assertThat((String) call(exports, "run", "acme")).isEqualTo("exported");
    }

    @Test
    void aCallThatThrowsGivesItsPermitBack() {
        Exports exports = new Exports();
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> call(exports, "failing", "acme")).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aRateBesideItIsDecidedWithItAndKeepsCounting() throws Throwable {
        Exports exports = new Exports();
        assertThat((String) call(exports, "ratedToo", "acme")).isEqualTo("done");
        assertThat((String) call(exports, "ratedToo", "acme")).as("the permit came back, the rate counted")
                .isEqualTo("done");
        assertThatThrownBy(() -> call(exports, "ratedToo", "acme")).isInstanceOf(RateLimitExceededException.class)
                .satisfies(rejection -> assertThat(((RateLimitExceededException) rejection).decision().concurrency())
                        .as("rejected by the rate").isFalse());
    }

    @Test
    void aCompletionStageHoldsItsPermitUntilItCompletes() throws Throwable {
        Exports exports = new Exports();
        CompletableFuture<String> pending = new CompletableFuture<>();
        CompletionStage<String> running = call(exports, "later", "acme", pending);

        CompletionStage<String> refused = call(exports, "later", "acme", CompletableFuture.completedFuture("x"));
        assertThat(refused.toCompletableFuture()).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(Exception.class).havingCause().isInstanceOf(RateLimitExceededException.class);

        pending.complete("done");
        assertThat(running.toCompletableFuture()).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("done");
        CompletionStage<String> next = call(exports, "later", "acme", CompletableFuture.completedFuture("next"));
        assertThat(next.toCompletableFuture()).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("next");
    }

    @Test
    void aMonoHoldsItsPermitUntilItEndsOrIsCancelled() throws Throwable {
        Exports exports = new Exports();
        Sinks.One<String> pending = Sinks.one();
        Mono<String> running = call(exports, "reactive", "acme", pending.asMono());
        Disposable subscription = running.subscribe();

        Mono<String> refused = call(exports, "reactive", "acme", Mono.just("x"));
        assertThatThrownBy(() -> refused.block(Duration.ofSeconds(10)))
                .isInstanceOf(RateLimitExceededException.class);

        subscription.dispose();
        Mono<String> next = call(exports, "reactive", "acme", Mono.just("next"));
        assertThat(next.block(Duration.ofSeconds(10))).as("the cancelled call's permit is back").isEqualTo("next");
        Mono<String> again = call(exports, "reactive", "acme", Mono.just("again"));
        assertThat(again.block(Duration.ofSeconds(10))).as("the ended call's permit is back").isEqualTo("again");
    }

    @Test
    void aFluxHoldsItsPermitUntilItEndsOrIsCancelled() throws Throwable {
        Exports exports = new Exports();
        Sinks.Many<String> pending = Sinks.many().unicast().onBackpressureBuffer();
        Flux<String> running = call(exports, "stream", "acme", pending.asFlux());
        Disposable subscription = running.subscribe();

        Flux<String> refused = call(exports, "stream", "acme", Flux.just("x"));
        assertThatThrownBy(() -> refused.blockLast(Duration.ofSeconds(10)))
                .isInstanceOf(RateLimitExceededException.class);

        subscription.dispose();
        Flux<String> next = call(exports, "stream", "acme", Flux.just("a", "b"));
        assertThat(next.collectList().block(Duration.ofSeconds(10))).containsExactly("a", "b");
        Flux<String> failing = call(exports, "stream", "acme", Flux.error(new IllegalStateException("broken")));
        assertThatThrownBy(() -> failing.blockLast(Duration.ofSeconds(10))).isInstanceOf(IllegalStateException.class);
        Flux<String> again = call(exports, "stream", "acme", Flux.just("c"));
        assertThat(again.blockLast(Duration.ofSeconds(10))).as("the failed call's permit is back").isEqualTo("c");
    }

    @Test
    void aWaitingCallerGetsThePermitOnceTheRunningCallEnds() throws Throwable {
        Exports exports = new Exports();
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        Future<String> first = inBackground(exports, "queued", "acme", firstRunning, releaseFirst);
        assertThat(firstRunning.await(10, TimeUnit.SECONDS)).isTrue();
        CountDownLatch secondRunning = new CountDownLatch(1);
        Future<String> second = inBackground(exports, "queued", "acme", secondRunning,
                new CountDownLatch(0));
        assertThat(secondRunning.await(200, TimeUnit.MILLISECONDS)).as("waits while the first runs").isFalse();

        releaseFirst.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("queued");
        assertThat(second.get(10, TimeUnit.SECONDS)).as("waited in line for the permit").isEqualTo("queued");
    }
}
