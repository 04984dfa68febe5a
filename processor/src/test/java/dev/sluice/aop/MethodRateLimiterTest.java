package dev.sluice.aop;

import static java.time.Duration.ofMillis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Sleeper;
import dev.sluice.StoreOverloadedException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import dev.sluice.tck.ClockAdvancingSleeper;
import dev.sluice.tck.MutableClock;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The engine behind the aspect, driven directly, without Spring or weaving. */
class MethodRateLimiterTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2400-03-01T10:00:00Z"));
    private final ClockAdvancingSleeper sleeper = new ClockAdvancingSleeper(clock);
    private final List<Duration> sleeps = sleeper.sleeps();
    private final AtomicInteger calls = new AtomicInteger();

    private MethodRateLimiter.Builder builder() {
        return MethodRateLimiter.builder().registry(registry().build());
    }

    private RateLimiterRegistry.Builder registry() {
        return RateLimiterRegistry.builder()
                .store(InMemoryRateLimitStore.builder().clock(clock).build())
                .clock(clock)
                .sleeper(sleeper);
    }

    private final MethodRateLimiter limits = builder().build();

    private Object call(MethodRateLimiter limiter, Object target, String methodName, Object... args) throws Throwable {
        Method method = findMethod(target.getClass(), methodName);
        return limiter.invoke(method, target, target.getClass(), args, () -> {
            calls.incrementAndGet();
            return method.invoke(target, args);
        });
    }

    private Object call(Object target, String methodName, Object... args) throws Throwable {
        return call(limits, target, methodName, args);
    }

    private static Method findMethod(Class<?> type, String name) {
        for (Method method : type.getDeclaredMethods()) {
            if (method.getName().equals(name)) {
                return method;
            }
        }
        throw new IllegalArgumentException(name);
    }

    record OtpRequest(String phone) {
    }

    static class Otp {
        @RateLimited(key = "#ip", limit = 3, window = "1m")
        @RateLimited(key = "#req.phone", limit = 10, window = "1h")
        public String send(String ip, OtpRequest req) {
            return "sent";
        }

        @RateLimited(key = "#p0", limit = 1, window = "1m")
        public String byPosition(String user) {
            return "ok";
        }

        @RateLimited(key = "#root.methodName + ':' + #a0", limit = 1, window = "1m")
        public String byRoot(String user) {
            return "ok";
        }

        @RateLimited(limit = 2, window = "${otp.window:1m}")
        public String shared() {
            return "ok";
        }

        @RateLimited(key = "#user", limit = 5, window = "1m", cost = "#items.size()")
        public String batch(String user, List<String> items) {
            return "ok";
        }
    }

    @Nested
    class Keys {

        @Test
        void countsEachKeyOfEachLimiterSeparately() throws Throwable {
            Otp otp = new Otp();
            for (int i = 0; i < 3; i++) {
                call(otp, "send", "10.0.0.1", new OtpRequest("+1555000" + i));
            }
            assertThatThrownBy(() -> call(otp, "send", "10.0.0.1", new OtpRequest("+15559999")))
                    .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                        assertThat(e.limiterName()).isEqualTo("Otp.send-1");
                        assertThat(e.key()).isEqualTo("10.0.0.1");
                    });
            assertThat(call(otp, "send", "10.0.0.2", new OtpRequest("+15550000"))).isEqualTo("sent");
            assertThat(calls).hasValue(4);
        }

        @Test
        void givesEachKeyOfAMethodItsOwnLimiterName() {
            Method send = findMethod(Otp.class, "send");
            assertThat(limits.limitersFor(send, Otp.class)).extracting(RateLimiter::name)
                    .containsExactly("Otp.send-1", "Otp.send-2");
        }

        @Test
        void resolvesArgumentsByPositionAndTheRootObject() throws Throwable {
            Otp otp = new Otp();
            call(otp, "byPosition", "alice");
            call(otp, "byPosition", "bob");
            assertThatThrownBy(() -> call(otp, "byPosition", "alice")).isInstanceOf(RateLimitExceededException.class);

            call(otp, "byRoot", "alice");
            assertThatThrownBy(() -> call(otp, "byRoot", "alice"))
                    .isInstanceOfSatisfying(RateLimitExceededException.class,
                            e -> assertThat(e.key()).isEqualTo("byRoot:alice"));
        }

        @Test
        void sharesOneKeyWhenTheKeyIsEmptyAndResolvesPlaceholders() throws Throwable {
            Otp otp = new Otp();
            call(otp, "shared");
            call(otp, "shared");
            assertThatThrownBy(() -> call(otp, "shared")).isInstanceOf(RateLimitExceededException.class);
            assertThat(limits.limitersFor(findMethod(Otp.class, "shared"), Otp.class).get(0).tiers())
                    .containsExactly(Tier.of(2, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW));
        }

        @Test
        void refusesANullOrBlankKeyNamingTheMethod() {
            Otp otp = new Otp();
            assertThatThrownBy(() -> call(otp, "send", "10.0.0.1", new OtpRequest(null)))
                    .isInstanceOf(RateLimitKeyException.class)
                    .hasMessageContaining("'#req.phone'")
                    .hasMessageContaining(Otp.class.getName() + ".send(String, OtpRequest)")
                    .hasMessageContaining("evaluated to null");
            assertThatThrownBy(() -> call(otp, "byPosition", " "))
                    .isInstanceOf(RateLimitKeyException.class).hasMessageContaining("blank");
        }

        @Test
        void takesTheCostFromAnExpression() throws Throwable {
            Otp otp = new Otp();
            call(otp, "batch", "u", List.of("a", "b", "c"));
            assertThatThrownBy(() -> call(otp, "batch", "u", List.of("a", "b", "c")))
                    .isInstanceOf(RateLimitExceededException.class);
            call(otp, "batch", "u", List.of("a", "b"));
            assertThatThrownBy(() -> call(otp, "batch", "v", List.of()))
                    .isInstanceOf(RateLimitKeyException.class)
                    .hasMessageContaining("'#items.size()'").hasMessageContaining("evaluated to 0");
        }

        @Test
        void rejectsACostAboveTheLimitAsACallThatCanNeverPass() throws Throwable {
            Otp otp = new Otp();
            assertThatThrownBy(() -> call(otp, "batch", "u", List.of("a", "b", "c", "d", "e", "f")))
                    .isInstanceOfSatisfying(RateLimitExceededException.class,
                            e -> assertThat(e.retryAfter()).isEqualTo(Duration.ofMinutes(1)));
            call(otp, "batch", "u", List.of("a", "b", "c", "d", "e"));
        }

        @Test
        void offersContributedVariablesUnlessAParameterHasTheirName() throws Throwable {
            MethodRateLimiter withIp = builder().variables(new RateLimitVariables() {
                @Override
                public Set<String> names() {
                    return Set.of("ip");
                }

                @Override
                public Object value(String name) {
                    return "192.0.2.7";
                }
            }).build();
            Object clientIpOnly = new Object() {
                @RateLimited(key = "#ip", limit = 1, window = "1m")
                public String hello() {
                    return "hi";
                }
            };
            call(withIp, clientIpOnly, "hello");
            assertThatThrownBy(() -> call(withIp, clientIpOnly, "hello"))
                    .isInstanceOfSatisfying(RateLimitExceededException.class,
                            e -> assertThat(e.key()).isEqualTo("192.0.2.7"));

            Otp otp = new Otp();
            for (int i = 0; i < 3; i++) {
                call(withIp, otp, "send", "10.9.9.9", new OtpRequest("+1"));
            }
            assertThatThrownBy(() -> call(withIp, otp, "send", "10.9.9.9", new OtpRequest("+2")))
                    .isInstanceOfSatisfying(RateLimitExceededException.class,
                            e -> assertThat(e.key()).isEqualTo("10.9.9.9"));
        }
    }

    static class Partner {
        @RateLimited(limit = 5, window = "1s", algorithm = Algorithm.TOKEN_BUCKET, onLimit = OnLimit.WAIT,
                maxWait = "10s")
        public String quote() {
            return "quote";
        }

        @RateLimited(limit = 1, window = "1m", onLimit = OnLimit.WAIT, maxWait = "1s")
        public String rare() {
            return "rare";
        }

        @RateLimited(limit = 1, window = "1m")
        public CompletableFuture<String> later() {
            return CompletableFuture.completedFuture("later");
        }

        @RateLimited(limit = 5, window = "1s", algorithm = Algorithm.TOKEN_BUCKET, onLimit = OnLimit.WAIT,
                maxWait = "10s")
        public CompletionStage<String> laterWaiting() {
            return CompletableFuture.completedFuture("later");
        }
    }

    @Nested
    class OnLimitBehaviour {

        @Test
        void waitsForAPermitWithinMaxWait() throws Throwable {
            Partner partner = new Partner();
            for (int i = 0; i < 20; i++) {
                assertThat(call(partner, "quote")).isEqualTo("quote");
            }
            assertThat(calls).hasValue(20);
            assertThat(sleeps).hasSize(15).containsOnly(ofMillis(200));
        }

        @Test
        void rejectsWhenThePermitIsFurtherAwayThanMaxWait() throws Throwable {
            Partner partner = new Partner();
            call(partner, "rare");
            assertThatThrownBy(() -> call(partner, "rare")).isInstanceOf(RateLimitExceededException.class);
            assertThat(sleeps).isEmpty();
        }

        @Test
        void failsTheFutureOfAnAsynchronousMethodInsteadOfThrowing() throws Throwable {
            Partner partner = new Partner();
            assertThat(((CompletableFuture<?>) call(partner, "later")).join()).isEqualTo("later");

            Object rejected = call(partner, "later");
            assertThat(rejected).isInstanceOf(CompletableFuture.class);
            assertThatThrownBy(((CompletableFuture<?>) rejected)::join).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(RateLimitExceededException.class);
            assertThat(calls).hasValue(1);
        }

        @Test
        void aCallScopedListenerHearsDecisionsCompletedOnAnotherThreadWithWhatItCapturedOnTheCallingThread()
                throws Throwable {
            ExecutorService storeThread = Executors.newSingleThreadExecutor();
            CountDownLatch answering = new CountDownLatch(1);
            InMemoryRateLimitStore counts = InMemoryRateLimitStore.builder().clock(clock).build();
            RateLimitStore elsewhere = new RateLimitStore() {
                @Override
                public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                    return counts.tryAcquire(key, tiers, cost);
                }

                @Override
                public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                    // Answers once the calls have returned, as a remote store would.
                    return CompletableFuture.supplyAsync(() -> {
                        try {
                            answering.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        return counts.tryAcquire(key, tiers, cost);
                    }, storeThread);
                }
            };
            ThreadLocal<String> request = new ThreadLocal<>();
            List<String> heard = new CopyOnWriteArrayList<>();
            MethodRateLimiter limiter = MethodRateLimiter.builder().registry(registry().store(elsewhere).build())
                    .callScopedListener(() -> {
                        String captured = request.get();
                        return new RateLimitListener() {
                            @Override
                            public void onDecision(RateLimiter rateLimiter, String key, Decision decision) {
                                heard.add(captured + ": " + (decision.allowed() ? "allowed" : "rejected") + " on "
                                        + (request.get() == null ? "another thread" : "the calling thread"));
                            }
                        };
                    }).build();
            try {
                Partner partner = new Partner();
                request.set("GET /later");
                CompletableFuture<?> admitted = (CompletableFuture<?>) call(limiter, partner, "later");
                CompletableFuture<?> rejected = (CompletableFuture<?>) call(limiter, partner, "later");
                request.remove();
                answering.countDown();

                admitted.join();
                assertThatThrownBy(rejected::join).hasCauseInstanceOf(RateLimitExceededException.class);
                assertThat(heard).containsExactly("GET /later: allowed on another thread",
                        "GET /later: rejected on another thread");
            } finally {
                storeThread.shutdownNow();
            }
        }

        @Test
        void schedulesTheWaitOfAnAsynchronousMethod() throws Throwable {
            Partner partner = new Partner();
            for (int i = 0; i < 6; i++) {
                ((CompletionStage<?>) call(partner, "laterWaiting")).toCompletableFuture().join();
            }
            assertThat(sleeps).containsExactly(ofMillis(200));
            assertThat(calls).hasValue(6);
        }
    }

    static class Keyed {
        @RateLimited(name = "strict", key = "#apiKey", limit = 2, window = "1m")
        public String strict(String apiKey) {
            return "ok";
        }

        @RateLimited(name = "shared", key = "#apiKey", limit = 2, window = "1m", onKeyError = KeyErrorPolicy.SHARED_KEY)
        public String shared(String apiKey) {
            return "ok";
        }

        @RateLimited(name = "lenient", key = "#apiKey", limit = 1, window = "1m", onKeyError = KeyErrorPolicy.SKIP)
        public String lenient(String apiKey) {
            return "ok";
        }

        @RateLimited(name = "throwing", key = "#user.name()", limit = 5, window = "1m")
        public String throwing(Object user) {
            return "ok";
        }

        @RateLimited(name = "priced", key = "#apiKey", cost = "#units", limit = 5, window = "1m")
        public String priced(String apiKey, Integer units) {
            return "ok";
        }

        @RateLimited(name = "async", key = "#apiKey", limit = 2, window = "1m")
        public CompletableFuture<String> later(String apiKey) {
            return CompletableFuture.completedFuture("ok");
        }

        @RateLimited(name = "configured", limitString = "${limits.configured.per-minute:2}", window = "1m")
        public String configured() {
            return "ok";
        }
    }

    @Nested
    class KeyErrors {

        private final Keyed keyed = new Keyed();
        private final List<String> heard = new ArrayList<>();
        private final MethodRateLimiter listened = MethodRateLimiter.builder().registry(registry()
                .listener(new RateLimitListener() {
                    @Override
                    public void onKeyError(RateLimiter limiter, RuntimeException error) {
                        heard.add(limiter.name());
                    }
                }).build()).build();

        @Test
        void aNullKeyFailsTheCallNamingLimiterAndMethodWithoutBlamingCompilation() {
            assertThatThrownBy(() -> call(listened, keyed, "strict", (Object) null))
                    .isInstanceOfSatisfying(RateLimitKeyException.class,
                            e -> assertThat(e.limiterName()).isEqualTo("strict"))
                    .hasMessage("Rate limiter 'strict' of " + Keyed.class.getName() + ".strict(String) cannot count"
                            + " this call: its key expression '#apiKey' evaluated to null; a key must identify the"
                            + " caller")
                    .hasMessageNotContaining("-parameters");
            assertThat(calls).hasValue(0);
            assertThat(heard).containsExactly("strict");
        }

        @Test
        void anExpressionThatThrowsIsAKeyErrorToo() {
            assertThatThrownBy(() -> call(keyed, "throwing", new Object()))
                    .isInstanceOf(RateLimitKeyException.class)
                    .hasMessageStartingWith("Rate limiter 'throwing' of " + Keyed.class.getName()
                            + ".throwing(Object) cannot count this call: its key expression '#user.name()' failed:")
                    .hasCauseInstanceOf(org.springframework.expression.EvaluationException.class);
            assertThatThrownBy(() -> call(keyed, "priced", "k", (Object) null))
                    .isInstanceOf(RateLimitKeyException.class)
                    .hasMessageContaining("its cost expression '#units' evaluated to null");
        }

        @Test
        void callsWhoseKeyFailedCanShareOneLimit() throws Throwable {
            call(keyed, "shared", (Object) null);
            call(keyed, "shared", (Object) null);
            assertThatThrownBy(() -> call(keyed, "shared", (Object) null)).isInstanceOf(RateLimitExceededException.class);
            assertThat(call(keyed, "shared", "a caller with a key")).isEqualTo("ok");
        }

        @Test
        void orGoAheadUnlimitedStillHeardOf() throws Throwable {
            for (int i = 0; i < 3; i++) {
                assertThat(call(listened, keyed, "lenient", (Object) null)).isEqualTo("ok");
            }
            assertThat(heard).containsExactly("lenient", "lenient", "lenient");
        }

        @Test
        void theDefaultPolicyIsTheApplicationsUnlessTheAnnotationSaysOtherwise() throws Throwable {
            MethodRateLimiter lenientByDefault = builder().onKeyError(KeyErrorPolicy.SKIP).build();
            assertThat(call(lenientByDefault, keyed, "strict", (Object) null)).isEqualTo("ok");
            call(lenientByDefault, keyed, "shared", (Object) null);
            call(lenientByDefault, keyed, "shared", (Object) null);
            assertThatThrownBy(() -> call(lenientByDefault, keyed, "shared", (Object) null))
                    .as("its own SHARED_KEY").isInstanceOf(RateLimitExceededException.class);
        }

        @Test
        void anAsynchronousMethodGetsTheErrorInItsFuture() throws Throwable {
            Object result = call(keyed, "later", (Object) null);
            assertThatThrownBy(((CompletableFuture<?>) result)::join).hasCauseInstanceOf(RateLimitKeyException.class);
        }

        @Test
        void aLimitCanComeFromAPlaceholder() throws Throwable {
            call(keyed, "configured");
            call(keyed, "configured");
            assertThatThrownBy(() -> call(keyed, "configured")).isInstanceOf(RateLimitExceededException.class);
        }
    }

    @Retention(RetentionPolicy.RUNTIME)
    @RateLimited(key = "#p0", limit = 2, window = "1m")
    @RateLimited(key = "#p0", limit = 3, window = "1d", algorithm = Algorithm.FIXED_WINDOW)
    @interface OtpPolicy {
    }

    @RateLimited(limit = 1, window = "1m")
    static class Everything {
        public String one() {
            return "1";
        }

        public String two() {
            return "2";
        }

        @RateLimited(limit = 3, window = "1m")
        public String own() {
            return "own";
        }

        @OtpPolicy
        public String policy(String phone) {
            return "policy";
        }
    }

    static class Guarded {
        @RateLimited(limit = 5, window = "1m", onStoreFailure = FailurePolicy.FAIL_CLOSED)
        public String codes() {
            return "sent";
        }

        @RateLimited(limit = 5, window = "1m")
        public String reads() {
            return "read";
        }
    }

    @Nested
    class StoreFailures {

        /** A store that cannot decide. */
        private final RateLimitStore down = new RateLimitStore() {
            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                throw new StoreUnavailableException("Redis did not answer within 100 ms", Duration.ofSeconds(1));
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                return CompletableFuture.failedFuture(
                        new StoreUnavailableException("Redis did not answer within 100 ms", Duration.ofSeconds(1)));
            }
        };

        @Test
        void aLimitersOwnPolicyOverridesTheDefault() throws Throwable {
            MethodRateLimiter failOpen = MethodRateLimiter.builder()
                    .registry(registry().store(down).onStoreFailure(FailurePolicy.FAIL_OPEN).build()).build();
            Guarded guarded = new Guarded();

            assertThat(call(failOpen, guarded, "reads")).isEqualTo("read");
            assertThatThrownBy(() -> call(failOpen, guarded, "codes")).isInstanceOfSatisfying(
                    StoreUnavailableException.class, e -> assertThat(e.limiterName()).isEqualTo("Guarded.codes"));
            assertThat(failOpen.limitersFor(findMethod(Guarded.class, "codes"), Guarded.class))
                    .singleElement().satisfies(limiter ->
                            assertThat(limiter.onStoreFailure()).isEqualTo(FailurePolicy.FAIL_CLOSED));
        }

        @Test
        void decidesInThisJvmByDefaultInOneFallbackStoreForAllLimiters() throws Throwable {
            MethodRateLimiter fallingBack = MethodRateLimiter.builder().registry(registry().store(down).build()).build();
            Everything everything = new Everything();

            call(fallingBack, everything, "one");
            call(fallingBack, everything, "two");
            assertThatThrownBy(() -> call(fallingBack, everything, "one"))
                    .as("one a minute, counted in this JVM").isInstanceOf(RateLimitExceededException.class);
            assertThat(fallingBack.registry().limiters()).extracting(RateLimiter::onStoreFailure)
                    .containsOnly(FailurePolicy.LOCAL_FALLBACK);
        }

        /** A store with more calls queued than it may hold, refusing every call. */
        private final RateLimitStore overloaded = new RateLimitStore() {
            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                throw new StoreOverloadedException("20000 decisions queued", Duration.ofMillis(300));
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                return CompletableFuture.failedFuture(
                        new StoreOverloadedException("20000 decisions queued", Duration.ofMillis(300)));
            }
        };

        @Test
        void anOverloadedStoreRejectsTheCallWhateverThePolicyAndCallScopedListenersHearOfIt() throws Throwable {
            List<String> heard = new CopyOnWriteArrayList<>();
            MethodRateLimiter limiter = MethodRateLimiter.builder()
                    .registry(registry().store(overloaded).onStoreFailure(FailurePolicy.FAIL_OPEN).build())
                    .callScopedListener(() -> new RateLimitListener() {
                        @Override
                        public void onDecision(RateLimiter rateLimiter, String key, Decision decision) {
                            heard.add("decision");
                        }

                        @Override
                        public void onStoreOverloaded(RateLimiter rateLimiter, String key, Decision decision,
                                                      StoreOverloadedException overload) {
                            heard.add("overloaded, retry after " + decision.retryAfter().toMillis() + " ms");
                        }
                    }).build();

            assertThatThrownBy(() -> call(limiter, new Guarded(), "codes"))
                    .isInstanceOfSatisfying(RateLimitExceededException.class, e -> assertThat(e.overloaded()).isTrue());
            assertThatThrownBy(() -> call(limiter, new Guarded(), "reads"))
                    .as("not admitted by FAIL_OPEN").isInstanceOf(RateLimitExceededException.class);
            CompletableFuture<?> later = (CompletableFuture<?>) call(limiter, new Partner(), "later");
            assertThatThrownBy(later::join).cause().isInstanceOfSatisfying(RateLimitExceededException.class,
                    e -> assertThat(e.overloaded()).isTrue());

            assertThat(calls).hasValue(0);
            assertThat(heard).containsExactly("overloaded, retry after 300 ms", "overloaded, retry after 300 ms",
                    "overloaded, retry after 300 ms");
        }
    }

    @Nested
    class Declarations {

        @Test
        void aClassAnnotationLimitsEachPublicMethodSeparately() throws Throwable {
            Everything everything = new Everything();
            call(everything, "one");
            call(everything, "two");
            assertThatThrownBy(() -> call(everything, "one")).isInstanceOfSatisfying(
                    RateLimitExceededException.class, e -> assertThat(e.limiterName()).isEqualTo("Everything.one"));
        }

        @Test
        void aMethodAnnotationReplacesTheClassAnnotation() {
            assertThat(limits.limitersFor(findMethod(Everything.class, "own"), Everything.class))
                    .singleElement().satisfies(limiter -> assertThat(limiter.tiers())
                            .containsExactly(Tier.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW)));
        }

        @Test
        void aMetaAnnotationContributesAllItsTiersToOneLimiter() {
            assertThat(limits.limitersFor(findMethod(Everything.class, "policy"), Everything.class))
                    .singleElement().satisfies(limiter -> {
                        assertThat(limiter.name()).isEqualTo("Everything.policy");
                        assertThat(limiter.tiers()).containsExactly(
                                Tier.of(2, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW),
                                Tier.of(3, Duration.ofDays(1), Algorithm.FIXED_WINDOW));
                    });
        }

        @Test
        void configurationReplacesTheTiersAndCanTurnALimiterOff() throws Throwable {
            Tier configured = Tier.of(7, Duration.ofSeconds(10), Algorithm.FIXED_WINDOW);
            MethodRateLimiter overridden = builder().overrides(new LimitOverrides() {
                @Override
                public Optional<List<Tier>> tiers(String limiterName) {
                    return limiterName.equals("Everything.own") ? Optional.of(List.of(configured)) : Optional.empty();
                }

                @Override
                public boolean enabled(String limiterName) {
                    return !limiterName.equals("Everything.one");
                }
            }).build();

            assertThat(overridden.limitersFor(findMethod(Everything.class, "own"), Everything.class))
                    .singleElement().satisfies(limiter -> assertThat(limiter.tiers()).containsExactly(configured));
            Everything everything = new Everything();
            for (int i = 0; i < 5; i++) {
                call(overridden, everything, "one");
            }
            assertThat(calls).hasValue(5);
        }
    }

    static class Organizations {
        @RateLimited(name = "orgs", key = "#org", plan = "#plan == null ? null : #plan.toLowerCase()", limit = 2,
                window = "1m")
        public String products(String org, String plan) {
            return "products of " + org;
        }
    }

    @Nested
    class Plans {

        private final List<String> unknownPlans = new CopyOnWriteArrayList<>();
        private final MethodRateLimiter planned = MethodRateLimiter.builder()
                .registry(registry().listener(new RateLimitListener() {
                    @Override
                    public void onUnknownPlan(RateLimiter limiter, String plan) {
                        unknownPlans.add(limiter.name() + ": " + plan);
                    }
                }).build())
                .overrides(new LimitOverrides() {
                    @Override
                    public Optional<List<Tier>> tiers(String limiterName) {
                        return Optional.empty();
                    }

                    @Override
                    public Map<String, List<Tier>> plans(String limiterName) {
                        return Map.of("pro", List.of(Tier.of(5, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW)));
                    }
                })
                .build();
        private final Organizations organizations = new Organizations();

        @Test
        void eachCallIsDecidedByTheTiersOfItsPlanOverTheCountsOfItsKey() throws Throwable {
            clock.alignTo(Duration.ofMinutes(1));
            call(planned, organizations, "products", "acme", null);
            call(planned, organizations, "products", "acme", null);
            assertThatThrownBy(() -> call(planned, organizations, "products", "acme", null))
                    .isInstanceOfSatisfying(RateLimitExceededException.class,
                            e -> assertThat(e.decision().limit()).isEqualTo(2));

            for (int i = 0; i < 3; i++) {
                call(planned, organizations, "products", "acme", "PRO");
            }
            assertThatThrownBy(() -> call(planned, organizations, "products", "acme", "pro"))
                    .as("5 a minute on the pro plan, of which the default plan used 2")
                    .isInstanceOfSatisfying(RateLimitExceededException.class,
                            e -> assertThat(e.decision().limit()).isEqualTo(5));
            call(planned, organizations, "products", "globex", "pro");
            assertThat(unknownPlans).isEmpty();
        }

        @Test
        void anUnknownPlanIsDecidedByTheDefaultTiersAndReported() throws Throwable {
            call(planned, organizations, "products", "acme", "platinum");
            call(planned, organizations, "products", "acme", "platinum");
            assertThatThrownBy(() -> call(planned, organizations, "products", "acme", "platinum"))
                    .isInstanceOf(RateLimitExceededException.class);
            assertThat(unknownPlans).containsOnly("orgs: platinum").hasSize(3);
        }

        @Test
        void theLimiterIsBuiltOnceFromTheDefinitionAndLivesInTheRegistry() {
            RateLimiter limiter = planned.limitersFor(findMethod(Organizations.class, "products"), Organizations.class)
                    .get(0);
            assertThat(planned.registry().find("orgs")).containsSame(limiter);
            assertThat(limiter.plans()).containsOnlyKeys("pro");
            assertThat(planned.limitersFor(findMethod(Organizations.class, "products"), Organizations.class))
                    .singleElement().isSameAs(limiter);
        }
    }

    static class Checkout {
        @RateLimited(name = "payments", key = "#account", limit = 5, window = "1m")
        public void pay(String account) {
        }
    }

    static class Refunds {
        @RateLimited(name = "payments", key = "#accountId", limit = 5, window = "1m")
        public void refund(String accountId) {
        }
    }

    static class Payouts {
        @RateLimited(name = "payments", key = "#account", limit = 50, window = "1m")
        public void payOut(String account) {
        }
    }

    @Nested
    class OneRegistry {

        @Test
        void methodsNamingOneLimiterWithTheSameTiersShareItAndItsCounts() throws Throwable {
            limits.validate(Checkout.class);
            limits.validate(Refunds.class);

            RateLimiter payments = limits.registry().find("payments").orElseThrow();
            assertThat(limits.limitersFor(findMethod(Refunds.class, "refund"), Refunds.class)).containsExactly(payments);
            for (int i = 0; i < 5; i++) {
                call(i % 2 == 0 ? new Checkout() : new Refunds(), i % 2 == 0 ? "pay" : "refund", "acct-1");
            }
            assertThatThrownBy(() -> call(new Refunds(), "refund", "acct-1"))
                    .isInstanceOf(RateLimitExceededException.class);
        }

        @Test
        void aNameTakenByOtherTiersFailsNamingTheMethod() {
            limits.validate(Checkout.class);

            assertThatThrownBy(() -> limits.validate(Payouts.class))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessageContaining(Payouts.class.getName() + ".payOut(String)")
                    .hasMessageContaining("a rate limiter named 'payments' is registered already, with other settings");
        }

        @Test
        void aLimiterBuiltInCodeThroughTheRegistryIsRegisteredWithItsSettings() {
            RateLimiter partner = limits.registry().limiterBuilder().name("partner")
                    .tier(Tier.of(2, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET)).build();

            assertThat(limits.registry().find("partner")).containsSame(partner);
            assertThat(partner.store()).isSameAs(limits.registry().store());
            assertThatThrownBy(() -> limits.registry().limiterBuilder().name("partner")
                    .tier(Tier.of(2, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET)).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("registered already");
        }
    }
}
