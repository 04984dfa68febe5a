package dev.sluice.aop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Sleeper;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The reactive path never blocks the thread that subscribes, nor any other non-blocking thread
 * it runs on: under BlockHound, subscriptions on Reactor's parallel scheduler are decided, waited
 * for and rejected, by the in-memory store and by the Redis store on a real redis-server.
 */
@ExtendWith(RedisExtension.class)
class NonBlockingReactiveCallsTest {

    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();
    /** Every blocking call BlockHound caught on a non-blocking thread. */
    private static final List<String> BLOCKED = new CopyOnWriteArrayList<>();

    private final MutableClock clock = new MutableClock(Instant.parse("2450-01-01T00:00:00Z"));
    private final ScheduledSleeper sleeper = new ScheduledSleeper(clock);
    private final Partner partner = new Partner();

    @BeforeAll
    static void installBlockHound() {
        if (INSTALLED.compareAndSet(false, true)) {
            BlockHound.builder()
                    .loadIntegrations()
                    // Redisson makes the workers of its executor with Netty's thread factory, whose threads
                    // Netty's integration counts as non-blocking; an idle worker waits for its next task here,
                    // outside any task (as Reactor's integration allows for its scheduled executors' queue).
                    .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "getTask")
                    // Redisson's event loop hands a connection's set-up to that executor, whose queue and
                    // workers take their locks for a moment, contended on a loaded machine: its own
                    // plumbing, outside any decision.
                    .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute")
                    .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor$Worker", "lock")
                    .blockingMethodCallback(method -> {
                        BLOCKED.add(Thread.currentThread().getName() + ": " + method);
                        throw new BlockingOperationError(method);
                    })
                    .install();
        }
    }

    @BeforeEach
    void forgetEarlierBlocking() {
        BLOCKED.clear();
    }

    static class Partner {
        final AtomicInteger ran = new AtomicInteger();

        @RateLimited(limit = 1, window = "500ms", algorithm = Algorithm.TOKEN_BUCKET, onLimit = OnLimit.WAIT,
                maxWait = "1s")
        public Mono<String> quote() {
            ran.incrementAndGet();
            return Mono.just("quote");
        }

        @RateLimited(key = "#id", limit = 1, window = "1m")
        public Mono<String> order(String id) {
            ran.incrementAndGet();
            return Mono.just("order " + id);
        }
    }

    private MethodRateLimiter engine(RateLimitStore store) {
        return MethodRateLimiter.builder()
                .registry(RateLimiterRegistry.builder().store(store).clock(clock).sleeper(sleeper).build())
                .build();
    }

    @SuppressWarnings("unchecked")
    private Mono<String> call(MethodRateLimiter engine, String methodName, Object... args) throws Throwable {
        Method method = null;
        for (Method declared : Partner.class.getDeclaredMethods()) {
            if (declared.getName().equals(methodName)) {
                method = declared;
            }
        }
        Method called = method;
        return (Mono<String>) engine.invoke(called, partner, Partner.class, args, () -> called.invoke(partner, args));
    }

    @Test
    void blockHoundCatchesBlockingOnTheParallelScheduler() {
        // Thread.yield is one of the calls BlockHound counts as blocking, and it waits for nothing.
        StepVerifier.create(Mono.fromCallable(() -> {
                    Thread.yield();
                    return "yielded";
                }).subscribeOn(Schedulers.parallel()))
                .expectError(BlockingOperationError.class)
                .verify(BOUND);
        assertThat(BLOCKED).singleElement().asString().contains("java.lang.Thread.yield");
    }

    @Test
    void inMemoryAWaitOnAParallelThreadIsScheduledAndThePermitArrives() throws Throwable {
        waitsWithoutBlocking(InMemoryRateLimitStore.builder().clock(clock).build());
    }

    @Test
    void inMemoryARejectionOnAParallelThreadIsAnErrorSignal() throws Throwable {
        rejectsWithoutBlocking(InMemoryRateLimitStore.builder().clock(clock).build());
    }

    @Test
    void redisAWaitOnAParallelThreadIsScheduledAndThePermitArrives(RedisServer redis) throws Throwable {
        withRedis(redis, this::waitsWithoutBlocking);
    }

    @Test
    void redisARejectionOnAParallelThreadIsAnErrorSignal(RedisServer redis) throws Throwable {
        withRedis(redis, this::rejectsWithoutBlocking);
    }

    /** A store over a client of its own, whose decisions complete on the parallel scheduler too. */
    private void withRedis(RedisServer redis, StoreTest test) throws Throwable {
        RedissonClient client = RedisClients.connect(redis);
        try {
            test.apply(RedissonRateLimitStore.builder(client)
                    .keyPrefix("sluice-nonblocking-" + UUID.randomUUID())
                    .clock(clock)
                    .timeout(RedisClients.PATIENT)
                    .completionExecutor(task -> Schedulers.parallel().schedule(task))
                    .build());
        } finally {
            RedisClients.shutDown(client);
        }
    }

    private void waitsWithoutBlocking(RateLimitStore store) throws Throwable {
        MethodRateLimiter engine = engine(store);
        Mono<String> quote = call(engine, "quote").subscribeOn(Schedulers.parallel());

        StepVerifier.create(quote).expectNext("quote").expectComplete().verify(BOUND);
        StepVerifier.create(quote).expectNext("quote").expectComplete().verify(BOUND);

        assertThat(sleeper.waits).containsExactly(Duration.ofMillis(500));
        assertThat(partner.ran).hasValue(2);
        assertThat(BLOCKED).isEmpty();
    }

    private void rejectsWithoutBlocking(RateLimitStore store) throws Throwable {
        MethodRateLimiter engine = engine(store);
        Mono<String> order = call(engine, "order", "o-1").subscribeOn(Schedulers.parallel());

        StepVerifier.create(order).expectNext("order o-1").expectComplete().verify(BOUND);
        StepVerifier.create(order)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(RateLimitExceededException.class,
                        rejection -> assertThat(rejection.key()).isEqualTo("o-1")))
                .verify(BOUND);

        assertThat(partner.ran).hasValue(1);
        assertThat(sleeper.waits).isEmpty();
        assertThat(BLOCKED).isEmpty();
    }

    /** A test run against a store. */
    @FunctionalInterface
    private interface StoreTest {
        void apply(RateLimitStore store) throws Throwable;
    }

    /**
     * Waits by moving the test clock and completing on Reactor's parallel scheduler a little
     * later: scheduled, never slept, and what follows the wait runs on a non-blocking thread.
     */
    static final class ScheduledSleeper implements Sleeper {

        private final MutableClock clock;
        final List<Duration> waits = new CopyOnWriteArrayList<>();

        ScheduledSleeper(MutableClock clock) {
            this.clock = clock;
        }

        @Override
        public void sleep(Duration duration) {
            throw new AssertionError("a call decided on subscription slept on its thread for " + duration);
        }

        @Override
        public CompletionStage<Void> sleepAsync(Duration duration) {
            waits.add(duration);
            CompletableFuture<Void> done = new CompletableFuture<>();
            Schedulers.parallel().schedule(() -> {
                clock.advance(duration);
                done.complete(null);
            }, 20, TimeUnit.MILLISECONDS);
            return done;
        }
    }
}
