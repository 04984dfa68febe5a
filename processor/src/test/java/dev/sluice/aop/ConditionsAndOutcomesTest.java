package dev.sluice.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.RateLimited;
import dev.sluice.tck.ClockAdvancingSleeper;
import dev.sluice.tck.MutableClock;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code condition}, {@code unless}, {@code countOn} and {@code fallbackMethod}, driven through
 * the engine directly, in memory.
 */
class ConditionsAndOutcomesTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    private final MutableClock clock = new MutableClock(Instant.parse("2400-03-01T10:00:00Z"));
    private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
    private final MethodRateLimiter limits = engine(store);

    private MethodRateLimiter engine(RateLimitStore store) {
        return MethodRateLimiter.builder().registry(RateLimiterRegistry.builder()
                .store(store)
                .clock(clock)
                .sleeper(new ClockAdvancingSleeper(clock))
                .build()).build();
    }

    private <T> T call(Object target, String methodName, Object... args) throws Throwable {
        return call(limits, target, methodName, args);
    }

    @SuppressWarnings("unchecked")
    private static <T> T call(MethodRateLimiter limits, Object target, String methodName, Object... args)
            throws Throwable {
        Method method = findMethod(target.getClass(), methodName);
        return (T) limits.invoke(method, target, target.getClass(), args, () -> {
            try {
                return method.invoke(target, args);
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getTargetException();
            }
        });
    }

    private static Method findMethod(Class<?> type, String name) {
        for (Method method : type.getDeclaredMethods()) {
            if (method.getName().equals(name)) {
                return method;
            }
        }
        throw new IllegalArgumentException(name);
    }

    /** What a wrong one-time code throws. */
    static class WrongCodeException extends RuntimeException {
        WrongCodeException() {
            super("wrong code");
        }
    }

    /** Methods limited with conditions and outcomes; each counts the times its body ran. */
    static class Codes {
        final AtomicInteger ran = new AtomicInteger();

        @RateLimited(key = "#phone", limit = 2, window = "1m", condition = "!#internal")
        public String send(String phone, boolean internal) {
            ran.incrementAndGet();
            return "sent";
        }

        @RateLimited(key = "#name", limit = 1, window = "1m", unless = "#result == null")
        public String find(String name, boolean exists) {
            ran.incrementAndGet();
            return exists ? "found " + name : null;
        }

        @RateLimited(limit = 1, window = "1m", unless = "#exception != null")
        public String unreliable(boolean fail) {
            ran.incrementAndGet();
            if (fail) {
                throw new IllegalStateException("partner down");
            }
            return "done";
        }

        @RateLimited(key = "#phone", limit = 5, window = "15m", blockFor = "15m", countOn = WrongCodeException.class)
        public String verify(String phone, String code) {
            ran.incrementAndGet();
            if (!code.equals("123456")) {
                throw new WrongCodeException();
            }
            return "verified";
        }

        @RateLimited(limit = 1, window = "1m", unless = "#result.missing")
        public String brokenUnless() {
            ran.incrementAndGet();
            return "no such property";
        }

        @RateLimited(name = "first", limit = 5, window = "1m", unless = "true")
        @RateLimited(name = "second", limit = 1, window = "1m")
        public String twoLimiters() {
            ran.incrementAndGet();
            return "ok";
        }

        @RateLimited(name = "wrong-codes", key = "#phone", limit = 3, window = "15m", countOn = WrongCodeException.class)
        @RateLimited(name = "devices", key = "#device", limit = 100, window = "1m")
        public String verifyOnDevice(String phone, String code, String device) {
            ran.incrementAndGet();
            return "verified";
        }

        @RateLimited(name = "wrong-codes-async", key = "#phone", limit = 3, window = "15m",
                countOn = WrongCodeException.class)
        @RateLimited(name = "devices-async", key = "#device", limit = 100, window = "1m")
        public CompletableFuture<String> verifyOnDeviceAsync(String phone, String code, String device) {
            ran.incrementAndGet();
            return CompletableFuture.completedFuture("verified");
        }
    }

    @Nested
    class Conditions {

        @Test
        void aCallWhoseConditionIsFalseIsNeitherLimitedNorCounted() throws Throwable {
            Codes codes = new Codes();
            for (int i = 0; i < 10; i++) {
                assertThat((String) call(codes, "send", "+447700900123", true)).isEqualTo("sent");
            }
            call(codes, "send", "+447700900123", false);
            call(codes, "send", "+447700900123", false);
            assertThatThrownBy(() -> call(codes, "send", "+447700900123", false))
                    .isInstanceOf(RateLimitExceededException.class);
            assertThat(codes.ran).hasValue(12);
        }

        @Test
        void configurationReplacesTheAnnotationsCondition() throws Throwable {
            MethodRateLimiter configured = MethodRateLimiter.builder()
                    .registry(RateLimiterRegistry.builder().store(store).clock(clock).build())
                    .overrides(new LimitOverrides() {
                        @Override
                        public Optional<List<Tier>> tiers(String limiterName) {
                            return Optional.empty();
                        }

                        @Override
                        public Optional<String> condition(String limiterName) {
                            return Optional.of("#phone != '+447700900000'");
                        }
                    })
                    .build();
            Codes codes = new Codes();
            for (int i = 0; i < 5; i++) {
                call(configured, codes, "send", "+447700900000", false);
            }
            call(configured, codes, "send", "+447700900123", true);
            call(configured, codes, "send", "+447700900123", true);
            assertThatThrownBy(() -> call(configured, codes, "send", "+447700900123", true))
                    .as("the annotation's condition is replaced").isInstanceOf(RateLimitExceededException.class);
        }

        @Test
        void aConditionThatIsNoBooleanIsAKeyError() {
            class Odd {
                @RateLimited(limit = 1, window = "1m", condition = "#flag")
                public String call(String flag) {
                    return "ok";
                }
            }
            assertThatThrownBy(() -> call(new Odd(), "call", "yes"))
                    .isInstanceOf(RateLimitKeyException.class)
                    .hasMessageContaining("condition expression '#flag' evaluated to a String");
        }
    }

    @Nested
    class Unless {

        @Test
        void aCallWhoseUnlessIsTrueGivesItsPermitBack() throws Throwable {
            Codes codes = new Codes();
            for (int i = 0; i < 5; i++) {
                assertThat((String) call(codes, "find", "ada", false)).isNull();
            }
            assertThat((String) call(codes, "find", "ada", true)).isEqualTo("found ada");
            assertThatThrownBy(() -> call(codes, "find", "ada", true)).isInstanceOf(RateLimitExceededException.class);
            assertThat(codes.ran).hasValue(6);
        }

        @Test
        void unlessSeesWhatTheCallThrew() {
            Codes codes = new Codes();
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> call(codes, "unreliable", true)).hasMessage("partner down");
            }
            assertThat(codes.ran).hasValue(3);
        }

        @Test
        void anUnlessThatFailsKeepsThePermit() throws Throwable {
            Codes codes = new Codes();
            call(codes, "brokenUnless");
            assertThatThrownBy(() -> call(codes, "brokenUnless")).isInstanceOf(RateLimitExceededException.class);
        }

        @Test
        void aCallALaterLimiterRejectsGivesBackWhatAnEarlierOneCountingByOutcomeTook() throws Throwable {
            Codes codes = new Codes();
            call(codes, "twoLimiters");
            for (int i = 0; i < 10; i++) {
                assertThatThrownBy(() -> call(codes, "twoLimiters")).isInstanceOf(RateLimitExceededException.class);
            }
            // "first" gave back every permit: once "second"'s sliding window has passed, both admit.
            clock.advance(Duration.ofMinutes(2));
            call(codes, "twoLimiters");
            assertThat(limits.registry().find("first").orElseThrow().tryAcquire("", 5).allowed()).isTrue();
        }
    }

    @Nested
    class CountingOnlyFailures {

        /**
         * A later limiter's key that cannot be worked out stops the call before it runs: what an
         * earlier limiter counting by outcome took is given back, as for a rejection.
         */
        @Test
        void aCallThatNeverRanBecauseOfALaterKeyErrorCountsNoWrongCode() throws Throwable {
            Codes codes = new Codes();
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> call(codes, "verifyOnDevice", "+447700900123", "123456", null))
                        .isInstanceOf(RateLimitKeyException.class);
                Throwable async = catchThrowable(() -> ((CompletableFuture<?>) call(codes, "verifyOnDeviceAsync",
                        "+447700900123", "123456", null)).join());
                assertThat(async).hasCauseInstanceOf(RateLimitKeyException.class);
            }

            assertThat((String) call(codes, "verifyOnDevice", "+447700900123", "123456", "device-1"))
                    .as("a right code from a device, no wrong code ever entered").isEqualTo("verified");
            assertThat(((CompletableFuture<String>) call(codes, "verifyOnDeviceAsync", "+447700900123", "123456",
                    "device-1")).join()).isEqualTo("verified");
            assertThat(codes.ran).hasValue(2);
        }

        /** A later limiter whose store fails closed stops the call too: nothing stays counted by outcome. */
        @Test
        void aCallThatNeverRanBecauseALaterStoreFailedCountsNoWrongCode() throws Throwable {
            InMemoryRateLimitStore shared = InMemoryRateLimitStore.builder().clock(clock).build();
            RateLimitStore failing = new ForwardingRateLimitStore(shared) {
                @Override
                public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                    if (key.startsWith("devices:")) {
                        throw new StoreUnavailableException("Redis did not answer", Duration.ofSeconds(1));
                    }
                    return super.tryAcquire(key, tiers, cost);
                }
            };
            MethodRateLimiter failingDevices = MethodRateLimiter.builder().registry(RateLimiterRegistry.builder()
                    .store(failing).clock(clock).onStoreFailure(FailurePolicy.FAIL_CLOSED).build()).build();
            Codes codes = new Codes();
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> call(failingDevices, codes, "verifyOnDevice", "+447700900123", "123456",
                        "device-1")).isInstanceOf(StoreUnavailableException.class);
            }

            assertThat(failingDevices.registry().find("wrong-codes").orElseThrow().tryAcquire("+447700900123", 3)
                    .allowed()).as("every wrong-code permit back").isTrue();
        }

        @Test
        void anyNumberOfRightCodesPassButFiveWrongOnesBlockTheNumber() throws Throwable {
            Codes codes = new Codes();
            for (int i = 0; i < 20; i++) {
                assertThat((String) call(codes, "verify", "+447700900123", "123456")).isEqualTo("verified");
            }
            for (int i = 0; i < 4; i++) {
                assertThatThrownBy(() -> call(codes, "verify", "+447700900123", "000000"))
                        .isInstanceOf(WrongCodeException.class);
                assertThat((String) call(codes, "verify", "+447700900123", "123456")).isEqualTo("verified");
            }
            assertThatThrownBy(() -> call(codes, "verify", "+447700900123", "000000"))
                    .isInstanceOf(WrongCodeException.class);
            // Five wrong codes: the number is at its limit, so the next check is rejected, right or not.
            assertThatThrownBy(() -> call(codes, "verify", "+447700900123", "123456"))
                    .isInstanceOf(RateLimitExceededException.class);
            // The rejection blocked the number for 15 minutes, past the window's end; after that,
            // the sliding window lets the wrong codes decay.
            clock.advance(Duration.ofMinutes(15).minusSeconds(1));
            assertThatThrownBy(() -> call(codes, "verify", "+447700900123", "123456"))
                    .isInstanceOf(RateLimitExceededException.class);
            clock.advance(Duration.ofMinutes(15));
            assertThat((String) call(codes, "verify", "+447700900123", "123456")).isEqualTo("verified");
            // Other numbers were never limited.
            assertThat((String) call(codes, "verify", "+447700900999", "123456")).isEqualTo("verified");
        }

        /**
         * Sixteen wrong codes at once for one number: each call holds its permit while it runs, so
         * no more than the limit run, whatever the timing. Each admitted call waits, running, until
         * every other call was decided (or 5 s), so that all outcomes are pending together.
         */
        @Test
        void concurrentWrongCodesNeverRunMoreThanTheLimit() throws Exception {
            int threads = 16;
            AtomicInteger decided = new AtomicInteger();
            AtomicInteger rejected = new AtomicInteger();
            CountDownLatch everyoneDecided = new CountDownLatch(1);
            class SlowCodes {
                final AtomicInteger ran = new AtomicInteger();

                @RateLimited(key = "#phone", limit = 5, window = "15m", blockFor = "15m",
                        countOn = WrongCodeException.class)
                public String verify(String phone, String code) throws InterruptedException {
                    ran.incrementAndGet();
                    if (decided.incrementAndGet() == threads) {
                        everyoneDecided.countDown();
                    }
                    everyoneDecided.await(5, TimeUnit.SECONDS);
                    throw new WrongCodeException();
                }
            }
            SlowCodes codes = new SlowCodes();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> calls = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    calls.add(pool.submit(() -> {
                        start.await();
                        try {
                            call(codes, "verify", "+447700900123", "000000");
                        } catch (RateLimitExceededException e) {
                            rejected.incrementAndGet();
                            if (decided.incrementAndGet() == threads) {
                                everyoneDecided.countDown();
                            }
                        } catch (WrongCodeException expected) {
                            // Counted.
                        } catch (Throwable unexpected) {
                            throw new AssertionError(unexpected);
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> call : calls) {
                    call.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(codes.ran).hasValue(5);
            assertThat(rejected).hasValue(threads - 5);
        }
    }

    /** Asynchronous and reactive methods counting by outcome. */
    static class AsyncCodes {
        final AtomicInteger ran = new AtomicInteger();

        @RateLimited(key = "#phone", limit = 2, window = "15m", countOn = WrongCodeException.class)
        public CompletableFuture<String> verify(String phone, String code) {
            ran.incrementAndGet();
            return code.equals("123456") ? CompletableFuture.completedFuture("verified")
                    : CompletableFuture.failedFuture(new WrongCodeException());
        }

        @RateLimited(key = "#name", limit = 1, window = "1m", unless = "#result == null")
        public Mono<String> find(String name, boolean exists) {
            ran.incrementAndGet();
            return exists ? Mono.just("found " + name) : Mono.empty();
        }

        @RateLimited(limit = 2, window = "1m", countOn = WrongCodeException.class)
        public Flux<String> stream(boolean fail) {
            ran.incrementAndGet();
            return fail ? Flux.concat(Flux.just("a"), Flux.error(new WrongCodeException())) : Flux.just("a", "b");
        }
    }

    @Nested
    class AsynchronousAndReactive {

        @Test
        void aFutureIsCountedByWhatItCompletesWith() throws Throwable {
            AsyncCodes codes = new AsyncCodes();
            for (int i = 0; i < 5; i++) {
                CompletableFuture<String> right = call(codes, "verify", "+447700900123", "123456");
                assertThat(right.get(10, TimeUnit.SECONDS)).isEqualTo("verified");
            }
            for (int i = 0; i < 2; i++) {
                CompletableFuture<String> wrong = call(codes, "verify", "+447700900123", "000000");
                assertThatThrownBy(() -> wrong.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(WrongCodeException.class);
            }
            CompletableFuture<String> limited = call(codes, "verify", "+447700900123", "123456");
            assertThatThrownBy(() -> limited.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RateLimitExceededException.class);
            assertThat(codes.ran).hasValue(7);
        }

        @Test
        void aMonoIsCountedByTheValueItPublishes() throws Throwable {
            AsyncCodes codes = new AsyncCodes();
            for (int i = 0; i < 5; i++) {
                Mono<String> empty = call(codes, "find", "ada", false);
                assertThat(empty.block(BOUND)).isNull();
            }
            Mono<String> found = call(codes, "find", "ada", true);
            assertThat(found.block(BOUND)).isEqualTo("found ada");
            Mono<String> limited = call(codes, "find", "ada", true);
            assertThatThrownBy(() -> limited.block(BOUND)).isInstanceOf(RateLimitExceededException.class);
            assertThat(codes.ran).hasValue(6);
        }

        @Test
        void aFluxIsCountedByHowItEnds() throws Throwable {
            AsyncCodes codes = new AsyncCodes();
            for (int i = 0; i < 5; i++) {
                Flux<String> fine = call(codes, "stream", false);
                assertThat(fine.collectList().block(BOUND)).containsExactly("a", "b");
            }
            for (int i = 0; i < 2; i++) {
                Flux<String> failing = call(codes, "stream", true);
                assertThatThrownBy(() -> failing.collectList().block(BOUND)).isInstanceOf(WrongCodeException.class);
            }
            Flux<String> limited = call(codes, "stream", false);
            assertThatThrownBy(() -> limited.collectList().block(BOUND))
                    .isInstanceOf(RateLimitExceededException.class);
        }
    }

    /** Methods with fallbacks; a quote is cached once fetched. */
    static class Quotes {
        final AtomicInteger ran = new AtomicInteger();

        @RateLimited(key = "#symbol", limit = 1, window = "1m", fallbackMethod = "cachedQuote")
        public String quote(String symbol) {
            ran.incrementAndGet();
            return "fresh " + symbol;
        }

        String cachedQuote(String symbol, RateLimitExceededException limited) {
            return "cached " + symbol + " (retry after " + limited.retryAfter().toSeconds() + " s)";
        }

        @RateLimited(limit = 1, window = "1m", fallbackMethod = "noQuote")
        public String quoteWithoutReason() {
            ran.incrementAndGet();
            return "fresh";
        }

        private String noQuote() {
            return "none";
        }

        @RateLimited(name = "strict", limit = 1, window = "1m")
        @RateLimited(name = "lenient", key = "#symbol", limit = 2, window = "1m", fallbackMethod = "cachedQuote")
        public String twoLimits(String symbol) {
            ran.incrementAndGet();
            return "fresh " + symbol;
        }

        @RateLimited(limit = 1, window = "1m", fallbackMethod = "cachedFuture")
        public CompletionStage<String> quoteLater(String symbol) {
            ran.incrementAndGet();
            return CompletableFuture.completedFuture("fresh " + symbol);
        }

        CompletionStage<String> cachedFuture(String symbol) {
            return CompletableFuture.completedFuture("cached " + symbol);
        }

        @RateLimited(limit = 1, window = "1m", fallbackMethod = "cachedMono")
        public Mono<String> quoteMono(String symbol) {
            ran.incrementAndGet();
            return Mono.just("fresh " + symbol);
        }

        Mono<String> cachedMono(String symbol) {
            return Mono.just("cached " + symbol);
        }

        @RateLimited(limit = 1, window = "1m", fallbackMethod = "cachedFlux")
        public Flux<String> quoteFlux(String symbol) {
            ran.incrementAndGet();
            return Flux.just("fresh", symbol);
        }

        Flux<String> cachedFlux(String symbol) {
            return Flux.just("cached", symbol);
        }
    }

    @Nested
    class Fallbacks {

        @Test
        void aRejectedCallReturnsTheFallbacksValue() throws Throwable {
            Quotes quotes = new Quotes();
            assertThat((String) call(quotes, "quote", "ACME")).isEqualTo("fresh ACME");
            assertThat((String) call(quotes, "quote", "ACME")).isEqualTo("cached ACME (retry after 120 s)");
            assertThat((String) call(quotes, "quoteWithoutReason")).isEqualTo("fresh");
            assertThat((String) call(quotes, "quoteWithoutReason")).isEqualTo("none");
            assertThat(quotes.ran).hasValue(2);
        }

        @Test
        void onlyTheLimiterNamingAFallbackFallsBack() throws Throwable {
            Quotes quotes = new Quotes();
            call(quotes, "twoLimits", "ACME");
            assertThatThrownBy(() -> call(quotes, "twoLimits", "ACME"))
                    .isInstanceOf(RateLimitExceededException.class)
                    .extracting(e -> ((RateLimitExceededException) e).limiterName()).isEqualTo("strict");
        }

        @Test
        void asynchronousAndReactiveCallsFallBackToTheirOwnType() throws Throwable {
            Quotes quotes = new Quotes();
            CompletionStage<String> fresh = call(quotes, "quoteLater", "ACME");
            assertThat(fresh.toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("fresh ACME");
            CompletionStage<String> cached = call(quotes, "quoteLater", "ACME");
            assertThat(cached.toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("cached ACME");

            Mono<String> mono = call(quotes, "quoteMono", "ACME");
            assertThat(mono.block(BOUND)).isEqualTo("fresh ACME");
            assertThat(mono.block(BOUND)).isEqualTo("cached ACME");

            Flux<String> flux = call(quotes, "quoteFlux", "ACME");
            assertThat(flux.collectList().block(BOUND)).containsExactly("fresh", "ACME");
            assertThat(flux.collectList().block(BOUND)).containsExactly("cached", "ACME");
            assertThat(quotes.ran).hasValue(3);
        }
    }

    @Nested
    class StartUpChecks {

        @Test
        void aFallbackThatCannotStandInIsNamedWithTheMethod() {
            class Missing {
                @RateLimited(limit = 1, window = "1m", fallbackMethod = "cached")
                public String quote(String symbol) {
                    return "fresh";
                }

                Integer cached(String symbol) {
                    return 0;
                }
            }
            assertThatThrownBy(() -> limits.validate(Missing.class))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessageContaining("Missing.quote(String)")
                    .hasMessageContaining("fallbackMethod 'cached' names no method")
                    .hasMessageContaining("cached(String) or cached(String, RateLimitExceededException) returning String")
                    .hasMessageContaining("; found ").hasMessageContaining("Missing.cached(String)");
        }

        @Test
        void aFluxsUnlessCannotReadAResult() {
            class Streams {
                @RateLimited(limit = 1, window = "1m", unless = "#result == null")
                public Flux<String> stream() {
                    return Flux.empty();
                }
            }
            assertThatThrownBy(() -> limits.validate(Streams.class))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessageContaining("unless '#result == null' reads #result");
        }

        @Test
        void unlessNeedsAStoreThatGivesPermitsBack() {
            RateLimitStore keeping = new ForwardingRateLimitStore(store) {
                @Override
                public boolean givesBack(Tier tier) {
                    return false;
                }
            };
            class Lookups {
                @RateLimited(limit = 1, window = "1m", unless = "#result == null")
                public String find() {
                    return null;
                }
            }
            assertThatThrownBy(() -> engine(keeping).validate(Lookups.class))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessageContaining("Lookups.find()")
                    .hasMessageContaining("cannot do");
        }

        @Test
        void aConditionNamingAnUnknownVariableFails() {
            class Unknown {
                @RateLimited(limit = 1, window = "1m", condition = "#nobody")
                public String call(String somebody) {
                    return "ok";
                }
            }
            assertThatThrownBy(() -> limits.validate(Unknown.class))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessageContaining("condition '#nobody' refers to #nobody");
        }
    }
}
