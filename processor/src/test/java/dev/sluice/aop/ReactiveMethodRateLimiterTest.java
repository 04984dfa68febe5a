package dev.sluice.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Sleeper;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.internal.SubscriberContext;
import dev.sluice.tck.MutableClock;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.Disposable;
import reactor.core.publisher.ConnectableFlux;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.context.Context;
import reactor.util.context.ContextView;
import reactor.util.retry.Retry;

/** Methods returning reactive types, driven through the engine directly: decided per subscription. */
class ReactiveMethodRateLimiterTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    private final MutableClock clock = new MutableClock(Instant.parse("2400-06-01T10:00:00Z"));
    private final ManualSleeper sleeper = new ManualSleeper(clock);
    /** How often a call proceeded, through the engine's invocation. */
    private final AtomicInteger proceeded = new AtomicInteger();

    private MethodRateLimiter.Builder builder() {
        return MethodRateLimiter.builder().registry(RateLimiterRegistry.builder()
                .store(InMemoryRateLimitStore.builder().clock(clock).build())
                .clock(clock)
                .sleeper(sleeper)
                .build());
    }

    private final MethodRateLimiter limits = builder().build();
    private final Quotes quotes = new Quotes();

    @SuppressWarnings("unchecked")
    private <T> T call(MethodRateLimiter limiter, Object target, String methodName, Object... args) throws Throwable {
        Method method = findMethod(target.getClass(), methodName);
        return (T) limiter.invoke(method, target, target.getClass(), args, () -> {
            proceeded.incrementAndGet();
            return method.invoke(target, args);
        });
    }

    private <T> T call(String methodName, Object... args) throws Throwable {
        return call(limits, quotes, methodName, args);
    }

    private static Method findMethod(Class<?> type, String name) {
        for (Method method : type.getDeclaredMethods()) {
            if (method.getName().equals(name)) {
                return method;
            }
        }
        throw new IllegalArgumentException(name);
    }

    /** Reactive methods; each counts the times its body ran. */
    static class Quotes {
        final AtomicInteger ran = new AtomicInteger();

        @RateLimited(limit = 2, window = "1m")
        public Mono<String> quote() {
            ran.incrementAndGet();
            return Mono.just("quote");
        }

        @RateLimited(limit = 2, window = "1m")
        public Flux<String> quotes() {
            ran.incrementAndGet();
            return Flux.just("a", "b", "c");
        }

        @RateLimited(key = "#user", limit = 2, window = "1m")
        public Mono<String> quoteFor(String user) {
            ran.incrementAndGet();
            return Mono.just("quote for " + user);
        }

        @RateLimited(limit = 3, window = "1m")
        public Mono<String> unreliable() {
            ran.incrementAndGet();
            return Mono.error(new IOException("partner down"));
        }

        @RateLimited(limit = 1, window = "1s", algorithm = Algorithm.TOKEN_BUCKET, onLimit = OnLimit.WAIT,
                maxWait = "1s")
        public Mono<String> throttled() {
            ran.incrementAndGet();
            return Mono.just("throttled");
        }

        @RateLimited(key = "#tenant", limit = 1, window = "1m")
        public Mono<String> forTenant() {
            ran.incrementAndGet();
            return Mono.just("report");
        }

        @RateLimited(limit = 1, window = "1m")
        public Single<String> single() {
            ran.incrementAndGet();
            return Single.just("single");
        }

        @RateLimited(limit = 1, window = "1m")
        public Flowable<String> flowable() {
            ran.incrementAndGet();
            return Flowable.just("x", "y");
        }

        @RateLimited(limit = 1, window = "1m")
        public Publisher<String> publisher() {
            ran.incrementAndGet();
            return Flux.just("p");
        }

        @RateLimited(limit = 1, window = "1m")
        public Mono<String> nothing() {
            ran.incrementAndGet();
            return null;
        }
    }

    @Nested
    class EachSubscriptionIsACall {

        @Test
        void aMonoSubscribedFiveTimesWithALimitOfTwoGivesTwoValuesAndThreeRejections() throws Throwable {
            Mono<String> quote = call("quote");

            for (int i = 0; i < 2; i++) {
                StepVerifier.create(quote).expectNext("quote").expectComplete().verify(BOUND);
            }
            for (int i = 0; i < 3; i++) {
                StepVerifier.create(quote).expectError(RateLimitExceededException.class).verify(BOUND);
            }
            assertThat(quotes.ran).hasValue(2);
            assertThat(proceeded).hasValue(2);
        }

        @Test
        void aFluxLikewise() throws Throwable {
            Flux<String> all = call("quotes");

            for (int i = 0; i < 2; i++) {
                StepVerifier.create(all).expectNext("a", "b", "c").expectComplete().verify(BOUND);
            }
            for (int i = 0; i < 3; i++) {
                StepVerifier.create(all).expectError(RateLimitExceededException.class).verify(BOUND);
            }
            assertThat(quotes.ran).hasValue(2);
        }

        @Test
        void repeatSubscribesAgainAndEachTimeCounts() throws Throwable {
            Mono<String> quote = call("quote");

            StepVerifier.create(quote.repeat(4))
                    .expectNext("quote", "quote")
                    .expectError(RateLimitExceededException.class)
                    .verify(BOUND);
            assertThat(quotes.ran).hasValue(2);
        }

        @Test
        void retrySubscribesAgainAndEachTimeCounts() throws Throwable {
            Mono<String> unreliable = call("unreliable");

            StepVerifier.create(unreliable.retryWhen(Retry.max(10).filter(IOException.class::isInstance)))
                    .expectError(RateLimitExceededException.class)
                    .verify(BOUND);
            // Three attempts admitted, failing; the fourth rejected, which is not retried.
            assertThat(quotes.ran).hasValue(3);
        }

        @Test
        void theMethodDoesNotRunForARejectedSubscription() throws Throwable {
            Mono<String> quote = call("quote");
            StepVerifier.create(quote.repeat(9)).expectNextCount(2).expectError().verify(BOUND);

            assertThat(quotes.ran).hasValue(2);
            assertThat(proceeded).hasValue(2);
        }

        @Test
        void makingTheResultWithoutSubscribingTakesNoPermitAndRunsNothing() throws Throwable {
            for (int i = 0; i < 5; i++) {
                Mono<String> unused = call("quote");
                assertThat(unused).isNotNull();
            }
            assertThat(quotes.ran).hasValue(0);
            assertThat(proceeded).hasValue(0);

            Mono<String> quote = call("quote");
            StepVerifier.create(quote.repeat(1)).expectNext("quote", "quote").expectComplete().verify(BOUND);
            StepVerifier.create(quote).expectError(RateLimitExceededException.class).verify(BOUND);
        }

        @Test
        void aKeyExpressionReadsTheArguments() throws Throwable {
            Mono<String> ann = call("quoteFor", "ann");
            StepVerifier.create(ann.repeat(1)).expectNextCount(2).expectComplete().verify(BOUND);

            StepVerifier.create(ann)
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(RateLimitExceededException.class,
                            rejection -> assertThat(rejection.key()).isEqualTo("ann")))
                    .verify(BOUND);
            StepVerifier.create(call("quoteFor", "bob")).expectNext("quote for bob").expectComplete().verify(BOUND);
        }

        @Test
        void aMonoMethodReturningNullPublishesNothingAsSpringsAdapterHasIt() throws Throwable {
            Mono<String> nothing = call("nothing");
            StepVerifier.create(nothing).expectComplete().verify(BOUND);
            StepVerifier.create(nothing).expectError(RateLimitExceededException.class).verify(BOUND);
        }
    }

    @Nested
    class OtherReactiveTypes {

        @Test
        void rxJavaSingleAndFlowableAreLimitedPerSubscription() throws Throwable {
            Single<String> single = call("single");
            single.test().awaitDone(10, TimeUnit.SECONDS).assertValue("single");
            single.test().awaitDone(10, TimeUnit.SECONDS).assertError(RateLimitExceededException.class);

            Flowable<String> flowable = call("flowable");
            flowable.test().awaitDone(10, TimeUnit.SECONDS).assertValues("x", "y");
            flowable.test().awaitDone(10, TimeUnit.SECONDS).assertError(RateLimitExceededException.class);

            assertThat(quotes.ran).hasValue(2);
        }

        @Test
        void aPlainPublisherToo() throws Throwable {
            Publisher<String> publisher = call("publisher");
            StepVerifier.create(publisher).expectNext("p").expectComplete().verify(BOUND);
            StepVerifier.create(publisher).expectError(RateLimitExceededException.class).verify(BOUND);
        }

        /** A publisher of a class of its own, which no adapter can make. */
        abstract static class OwnPublisher implements Publisher<String> {
        }

        static class Unsupported {
            @RateLimited(limit = 1, window = "1m")
            public ConnectableFlux<String> connectable() {
                return Flux.just("x").publish();
            }
        }

        static class OwnType {
            @RateLimited(limit = 1, window = "1m")
            public OwnPublisher own() {
                return new OwnPublisher() {
                    @Override
                    public void subscribe(Subscriber<? super String> subscriber) {
                        Flux.just("own").subscribe(subscriber);
                    }
                };
            }
        }

        @Test
        void aReactiveTypeThatCannotBeMadeOfALimitedPublisherFailsValidationNamingTheMethod() {
            assertThatThrownBy(() -> limits.validate(Unsupported.class))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessageStartingWith("Invalid @RateLimited on " + Unsupported.class.getName()
                            + ".connectable(): @RateLimited is on a method returning reactor.core.publisher.ConnectableFlux,"
                            + " a reactive type whose calls are decided when subscribed, but Spring's"
                            + " ReactiveAdapterRegistry only makes a reactor.core.publisher.Flux of a publisher");
            assertThatThrownBy(() -> limits.validate(OwnType.class))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessageContaining(OwnType.class.getName() + ".own(): @RateLimited is on a method returning "
                            + OwnPublisher.class.getName());
        }
    }

    @Nested
    class TheSubscribersContext {

        /** {@code #tenant}, read from the subscriber's Reactor Context. */
        private final RateLimitVariables tenantFromContext = new RateLimitVariables() {
            @Override
            public Set<String> names() {
                return Set.of("tenant");
            }

            @Override
            public @Nullable Object value(String name) {
                ContextView context = SubscriberContext.current();
                return context == null ? null : context.getOrDefault("tenant", null);
            }
        };

        @Test
        void isCurrentWhileExpressionsAreEvaluated() throws Throwable {
            MethodRateLimiter limiter = builder().variables(tenantFromContext).build();
            Mono<String> report = call(limiter, quotes, "forTenant");

            StepVerifier.create(report.contextWrite(Context.of("tenant", "acme")))
                    .expectNext("report").expectComplete().verify(BOUND);
            StepVerifier.create(report.contextWrite(Context.of("tenant", "acme")))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(RateLimitExceededException.class,
                            rejection -> assertThat(rejection.key()).isEqualTo("acme")))
                    .verify(BOUND);
            StepVerifier.create(report.contextWrite(Context.of("tenant", "globex")))
                    .expectNext("report").expectComplete().verify(BOUND);
            assertThat(SubscriberContext.current()).isNull();
        }

        @Test
        void aSubscriptionWithoutTheValueGetsTheKeyErrorAsAnErrorSignal() throws Throwable {
            MethodRateLimiter limiter = builder().variables(tenantFromContext).build();
            Mono<String> report = call(limiter, quotes, "forTenant");

            StepVerifier.create(report).expectError(RateLimitKeyException.class).verify(BOUND);
            assertThat(quotes.ran).hasValue(0);
        }

        @Test
        void isCurrentWhenCallScopedListenersAreAskedOncePerSubscription() throws Throwable {
            List<String> asked = new CopyOnWriteArrayList<>();
            List<String> heard = new CopyOnWriteArrayList<>();
            MethodRateLimiter limiter = builder().callScopedListener(() -> {
                ContextView context = SubscriberContext.current();
                String request = context == null ? "none" : context.getOrDefault("request", "none");
                asked.add(request);
                return new RateLimitListener() {
                    @Override
                    public void onDecision(dev.sluice.RateLimiter rateLimiter, String key,
                                           dev.sluice.Decision decision) {
                        heard.add(request + ": " + (decision.allowed() ? "allowed" : "rejected"));
                    }
                };
            }).build();

            Mono<String> quote = call(limiter, quotes, "quote");
            assertThat(asked).isEmpty();
            for (String request : List.of("GET /1", "GET /2")) {
                StepVerifier.create(quote.contextWrite(Context.of("request", request)))
                        .expectNext("quote").expectComplete().verify(BOUND);
            }
            StepVerifier.create(quote.contextWrite(Context.of("request", "GET /3")))
                    .expectError(RateLimitExceededException.class).verify(BOUND);
            assertThat(asked).containsExactly("GET /1", "GET /2", "GET /3");
            assertThat(heard).containsExactly("GET /1: allowed", "GET /2: allowed", "GET /3: rejected");
            assertThat(SubscriberContext.current()).isNull();
        }
    }

    @Nested
    class Waiting {

        @Test
        void aWaitDelaysTheSubscriptionWithoutHoldingTheSubscribingThread() throws Throwable {
            Mono<String> throttled = call("throttled");
            StepVerifier.create(throttled).expectNext("throttled").expectComplete().verify(BOUND);

            CompletableFuture<String> waiting = throttled.toFuture();

            // The subscribing thread is back, and the permit still to come: the wait is scheduled.
            ManualSleeper.Wait wait = sleeper.next();
            assertThat(wait.duration()).isEqualTo(Duration.ofSeconds(1));
            assertThat(waiting).isNotDone();
            assertThat(quotes.ran).hasValue(1);

            wait.end();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo("throttled");
            assertThat(quotes.ran).hasValue(2);
        }

        @Test
        void aSubscriptionCancelledWhileItWaitsLeavesTheLineAndGivesItsPermitBack() throws Throwable {
            Mono<String> throttled = call("throttled");
            StepVerifier.create(throttled).expectNext("throttled").expectComplete().verify(BOUND);
            Disposable gaveUp = throttled.subscribe();
            ManualSleeper.Wait cancelledWait = sleeper.next();

            gaveUp.dispose();
            CompletableFuture<String> next = throttled.toFuture();

            // The permit given back is the next one: due in a second, within maxWait. Behind the
            // cancelled subscription, it would be due in two, and the call rejected.
            ManualSleeper.Wait wait = sleeper.next();
            assertThat(wait.duration()).isEqualTo(Duration.ofSeconds(1));
            wait.end();
            assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("throttled");
            cancelledWait.end();
            assertThat(quotes.ran).as("the cancelled subscription never ran").hasValue(2);
        }

        @Test
        void aWaiterWhosePermitComesAfterMaxWaitIsRejected() throws Throwable {
            Mono<String> throttled = call("throttled");
            StepVerifier.create(throttled).expectNextCount(1).expectComplete().verify(BOUND);
            CompletableFuture<String> waiting = throttled.toFuture();
            // A second waiter, beyond maxWait once the first is served.
            CompletableFuture<String> tooLate = throttled.toFuture();
            ManualSleeper.Wait wait = sleeper.next();
            wait.end();

            assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo("throttled");
            assertThatThrownBy(() -> tooLate.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RateLimitExceededException.class);
            assertThat(quotes.ran).hasValue(2);
        }
    }

    /** A sleeper whose waits the test ends, moving the clock: a wait that blocked would never return. */
    static final class ManualSleeper implements Sleeper {

        private final MutableClock clock;
        private final BlockingQueue<Wait> waits = new LinkedBlockingQueue<>();

        ManualSleeper(MutableClock clock) {
            this.clock = clock;
        }

        @Override
        public void sleep(Duration duration) {
            throw new AssertionError("a call decided on subscription slept on its thread for " + duration);
        }

        @Override
        public CompletionStage<Void> sleepAsync(Duration duration) {
            Wait wait = new Wait(duration, new CompletableFuture<>());
            waits.add(wait);
            return wait.done;
        }

        /** The next wait to begin, within a few seconds. */
        Wait next() throws InterruptedException {
            Wait wait = waits.poll(10, TimeUnit.SECONDS);
            assertThat(wait).as("a scheduled wait").isNotNull();
            return wait;
        }

        /** One wait, ended by the test. */
        final class Wait {
            private final Duration duration;
            private final CompletableFuture<Void> done;

            Wait(Duration duration, CompletableFuture<Void> done) {
                this.duration = duration;
                this.done = done;
            }

            Duration duration() {
                return duration;
            }

            void end() {
                clock.advance(duration);
                done.complete(null);
            }
        }
    }
}
