package dev.sluice.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import dev.sluice.tck.ClockAdvancingSleeper;
import dev.sluice.tck.MutableClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * A limiter that waits is one for calls to a partner, which counts a call when it arrives: its
 * sliding log counts each call again from when the method returned (or its future or publisher
 * completed), so that a slow call cannot let the next ones in within the partner's window.
 */
class WaitingCallsCountFromTheirEndTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    private final MutableClock clock = new MutableClock(Instant.parse("2400-05-01T10:00:00Z"));
    private final MethodRateLimiter limits = MethodRateLimiter.builder().registry(RateLimiterRegistry.builder()
            .store(InMemoryRateLimitStore.builder().clock(clock).build())
            .clock(clock)
            .sleeper(new ClockAdvancingSleeper(clock))
            .build()).build();
    private final Partner partner = new Partner(clock);

    /** Calls to a partner allowing 2 a second; the first call takes 300 ms to arrive, the others none. */
    static class Partner {
        final MutableClock clock;
        final List<Instant> arrivals = new CopyOnWriteArrayList<>();

        Partner(MutableClock clock) {
            this.clock = clock;
        }

        private String arrive() {
            if (arrivals.isEmpty()) {
                clock.advanceMillis(300);
            }
            arrivals.add(clock.instant());
            return "quote";
        }

        @RateLimited(name = "waiting", limit = 2, window = "1s", algorithm = Algorithm.SLIDING_LOG,
                onLimit = OnLimit.WAIT, maxWait = "5s")
        public String quote() {
            return arrive();
        }

        @RateLimited(name = "waiting-async", limit = 2, window = "1s", algorithm = Algorithm.SLIDING_LOG,
                onLimit = OnLimit.WAIT, maxWait = "5s")
        public CompletionStage<String> quoteAsync() {
            return CompletableFuture.completedFuture(arrive());
        }

        @RateLimited(name = "waiting-reactive", limit = 2, window = "1s", algorithm = Algorithm.SLIDING_LOG,
                onLimit = OnLimit.WAIT, maxWait = "5s")
        public Mono<String> quoteReactive() {
            return Mono.fromSupplier(this::arrive);
        }

        @RateLimited(name = "rejecting", limit = 2, window = "1s", algorithm = Algorithm.SLIDING_LOG)
        public String quoteOrFail() {
            return arrive();
        }
    }

    private Object call(String methodName) throws Throwable {
        Method method = Partner.class.getMethod(methodName);
        Object result = limits.invoke(method, partner, Partner.class, new Object[0], () -> {
            try {
                return method.invoke(partner);
            } catch (InvocationTargetException e) {
                throw e.getTargetException();
            }
        });
        if (result instanceof CompletionStage<?> future) {
            return future.toCompletableFuture().get();
        }
        if (result instanceof Mono<?> mono) {
            return mono.block(BOUND);
        }
        return result;
    }

    /** The third call's arrival, in ms after the first call was made. */
    private long thirdArrival(String methodName) throws Throwable {
        Instant start = clock.instant();
        for (int i = 0; i < 3; i++) {
            call(methodName);
        }
        return Duration.between(start, partner.arrivals.get(2)).toMillis();
    }

    @Test
    void aWaitingLimiterCountsACallFromWhenTheMethodReturned() throws Throwable {
        // Counted from its decision, the first call would have let the third in at 1,000 ms,
        // within a second of the first call's arrival at 300 ms.
        assertThat(thirdArrival("quote")).isEqualTo(1300);
    }

    @Test
    void aWaitingLimiterCountsAnAsynchronousCallFromWhenItsFutureCompleted() throws Throwable {
        assertThat(thirdArrival("quoteAsync")).isEqualTo(1300);
    }

    @Test
    void aWaitingLimiterCountsASubscribedCallFromWhenItsPublisherCompleted() throws Throwable {
        assertThat(thirdArrival("quoteReactive")).isEqualTo(1300);
    }

    @Test
    void aRejectingLimiterCountsACallFromItsDecision() throws Throwable {
        call("quoteOrFail");
        call("quoteOrFail");
        assertThatThrownBy(() -> call("quoteOrFail")).isInstanceOfSatisfying(RateLimitExceededException.class,
                rejected -> assertThat(rejected.retryAfter()).isEqualTo(Duration.ofMillis(700)));
    }
}
