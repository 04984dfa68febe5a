package dev.sluice.aop;

import dev.sluice.Decision;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.StoreOverloadedException;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.aop.Expressions.MethodExpression;
import dev.sluice.aop.LimitDefinitionParser.ParsedLimit;
import dev.sluice.aop.internal.SubscriberContext;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.aspectj.lang.ProceedingJoinPoint;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.aspectj.MethodInvocationProceedingJoinPoint;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.util.ClassUtils;
import org.springframework.util.ObjectUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

/**
 * Applies the {@code @RateLimited} limits of a method to its calls: the engine behind Spring
 * proxies (the advisor {@code @EnableRateLimiting} registers) and {@link RateLimitedAspect}
 * (AspectJ weaving) alike. Each method's annotations are parsed and validated into {@link dev.sluice.LimitDefinition}s
 * once per method and target class, and each definition is registered in the
 * {@link RateLimiterRegistry}, which builds its {@link RateLimiter} with the registry's store,
 * clock and policies; each call then evaluates the key, cost and plan expressions and asks the
 * limiters in declaration order.
 *
 * <pre class="code">
 * MethodRateLimiter limits = MethodRateLimiter.builder()
 *         .registry(RateLimiterRegistry.builder().store(RedissonRateLimitStore.builder(redisson).build()).build())
 *         .build();
 * RateLimitedAspect.aspectOf().setMethodRateLimiter(limits);   // AspectJ weaving without Spring
 * </pre>
 *
 * <p>Methods returning {@link CompletionStage} or {@link CompletableFuture} never block their
 * caller: the decision is asynchronous, waits are scheduled, and a rejection fails the returned
 * future. Such a method itself runs on the calling thread when admitted at once, and otherwise
 * on the thread that completes the decision (after a wait, the sleeper's; with a Redis store,
 * the store's executor), so it should only start asynchronous work, not rely on thread-bound
 * context.
 *
 * <p>Methods returning {@code Mono}, {@code Flux} or any other type Spring's
 * {@link ReactiveAdapterRegistry} knows (RxJava 3, Kotlin {@code Flow}, {@code Publisher},
 * Mutiny), and Kotlin {@code suspend} functions behind Spring proxies, are decided when
 * subscribed, which needs Reactor on the class path: calling the method only returns a
 * publisher of its type, taking no permit. Each subscription to it (a re-subscription by
 * {@code retry()} or {@code repeat()} too) is a call of its own: its expressions are evaluated
 * with the subscriber's Reactor Context as {@link SubscriberContext#current()}, it is decided
 * through the store's asynchronous path without blocking the subscribing thread (a wait is
 * scheduled), and once admitted the method runs and what it returns is subscribed; a rejected
 * subscription gets {@code RateLimitExceededException} as an error signal, and the method does
 * not run. A reactive return type that cannot be limited so (Reactor absent, or a type the
 * registry cannot make from a publisher) fails validation, naming the method.
 *
 * <p>All other methods are decided before they run, on the calling thread.
 */
public final class MethodRateLimiter {

    private static final System.Logger LOGGER = System.getLogger(MethodRateLimiter.class.getName());

    /** The key of calls whose expression failed, under {@link KeyErrorPolicy#SHARED_KEY}. */
    static final String KEY_OF_FAILED_EXPRESSIONS = "(key error)";

    /** Runs the intercepted method. */
    @FunctionalInterface
    public interface Invocation {

        /**
         * Proceeds with the call.
         *
         * @return what the method returned
         * @throws Throwable what the method threw
         */
        @Nullable Object proceed() throws Throwable;

        /**
         * An invocation that proceeds with this call once more, as if it were made again:
         * calls decided when subscribed proceed with one for each admitted subscription, after
         * the call has returned, possibly on another thread. A Spring proxy's gives a copy of
         * the method invocation, which runs the rest of the advice chain again.
         *
         * @return by default this invocation, for invocations that may proceed any number of
         *         times, on any thread
         */
        default Invocation copy() {
            return this;
        }
    }

    /** Whether Reactor is on the class path, without which no call is decided on subscription. */
    private static final boolean REACTOR_PRESENT =
            ClassUtils.isPresent("reactor.core.publisher.Mono", MethodRateLimiter.class.getClassLoader());
    /** Whether Spring proxies hand suspend functions to their advice as publishers. */
    private static final boolean COROUTINES_REACTOR_PRESENT =
            ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", MethodRateLimiter.class.getClassLoader());
    /** The supertypes, by name, that make a return type reactive whether or not an adapter knows it. */
    private static final List<String> PUBLISHERS = List.of("org.reactivestreams.Publisher",
            "java.util.concurrent.Flow$Publisher", "kotlinx.coroutines.flow.Flow");

    private final RateLimiterRegistry registry;
    private final List<CallScopedListener> callScopedListeners;
    private final KeyErrorPolicy onKeyError;
    private final Expressions expressions;
    private final LimitDefinitionParser parser;
    private final Map<MethodClassKey, MethodLimits> limits = new ConcurrentHashMap<>();
    /** The limits of each method as calls bring it, for each class it is called on: no key made per call. */
    private final Map<Method, CalledOn> calls = new ConcurrentHashMap<>();
    private final Map<String, Class<?>> defaultNames = new ConcurrentHashMap<>();

    private MethodRateLimiter(Builder builder) {
        this.registry = builder.registry != null ? builder.registry : RateLimiterRegistry.builder().build();
        this.callScopedListeners = List.copyOf(builder.callScopedListeners);
        this.onKeyError = builder.onKeyError;
        this.expressions = new Expressions(builder.variables, builder.beanResolver);
        this.parser = new LimitDefinitionParser(builder.placeholders, builder.overrides, expressions);
    }

    /**
     * Starts a definition; every setting has a default that works without Spring.
     *
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Calls {@code invocation} if the limits of {@code method} admit the call, applying each
     * limiter's {@code onLimit}.
     *
     * @param method      the method called, as the proxy or join point saw it
     * @param target      the object called; {@code null} for a static method
     * @param targetClass the class of the object called (the declaring class for a static method)
     * @param args        the arguments
     * @param invocation  proceeds with the call
     * @return what the method returned; for an asynchronous method, a future that fails with
     *         {@code RateLimitExceededException} when the call is rejected; for a method decided
     *         when subscribed, a publisher of its type, deciding each subscription
     * @throws Throwable what the method threw, or {@code RateLimitExceededException}
     */
    public @Nullable Object invoke(Method method, @Nullable Object target, Class<?> targetClass,
                                   @Nullable Object[] args, Invocation invocation) throws Throwable {
        return limit(method, target, targetClass, args, invocation, null);
    }

    /** {@link #invoke} for the aspect: it proceeds with the join point, so that a call makes no invocation. */
    @Nullable Object invoke(Method method, @Nullable Object target, Class<?> targetClass, @Nullable Object[] args,
                            ProceedingJoinPoint joinPoint) throws Throwable {
        return limit(method, target, targetClass, args, null, joinPoint);
    }

    private @Nullable Object limit(Method method, @Nullable Object target, Class<?> targetClass,
                                   @Nullable Object[] args, @Nullable Invocation invocation,
                                   @Nullable ProceedingJoinPoint joinPoint) throws Throwable {
        MethodLimits methodLimits = limitsForCall(method, targetClass);
        if (methodLimits.limits.length == 0) {
            return proceed(invocation, joinPoint);
        }
        if (methodLimits.subscribed != null) {
            return limitSubscriptions(methodLimits, methodLimits.subscribed, target, targetClass, args,
                    invocation != null ? invocation : joinPoint(methodLimits, Objects.requireNonNull(joinPoint)));
        }
        // Keys that name a parameter or variable, and fixed costs, need no expression context.
        EvaluationContext context = methodLimits.needsContext
                ? expressions.context(methodLimits.method, methodLimits.arguments, args, target, targetClass) : null;
        List<RateLimitListener> heard = listenersForThisCall();
        if (methodLimits.async) {
            Invocation later = invocation != null ? invocation : Objects.requireNonNull(joinPoint)::proceed;
            if (!methodLimits.countsByOutcome && !methodLimits.fallsBack && !methodLimits.holdsPermits()) {
                CompletableFuture<List<Taken>> admission = admitAsync(methodLimits.limits, args, context, heard);
                return cancelling(admission.thenCompose(admitted -> proceedAsync(later.copy())), admission);
            }
            return limitAsync(methodLimits, target, targetClass, args, context, heard, later);
        }
        List<Taken> taken = null;
        for (MethodLimit limit : methodLimits.limits) {
            String key;
            long cost;
            String plan;
            Decision decision;
            try {
                try {
                    if (!limit.applies(args, context)) {
                        continue;
                    }
                    key = limit.key(args, context);
                    cost = limit.cost(args, context);
                    plan = limit.plan(args, context);
                } catch (RateLimitKeyException error) {
                    if (!limit.sharesKeyAfter(error)) {
                        continue;
                    }
                    key = KEY_OF_FAILED_EXPRESSIONS;
                    cost = 1;
                    plan = null;
                }
                try {
                    decision = limit.limiter.acquire(key, cost, plan);
                } catch (RateLimitExceededException rejection) {
                    tell(heard, limit.limiter, key, rejection);
                    throw rejection;
                }
            } catch (RuntimeException notRun) {
                // The call does not run, whatever stopped it (a rejection, a key error, a store that failed closed):
                // it has no outcome to be counted by.
                if (taken != null) {
                    end(taken);
                }
                if (notRun instanceof RateLimitExceededException rejection && limit.fallback != null) {
                    return limit.fallback.call(target, args, rejection);
                }
                throw notRun;
            }
            tell(heard, limit.limiter, key, decision);
            if (limit.tracksCall()) {
                if (taken == null) {
                    taken = new ArrayList<>(methodLimits.limits.length);
                }
                taken.add(new Taken(limit, key, cost, plan, registry.clock().instant()));
            }
        }
        if (taken == null) {
            return proceed(invocation, joinPoint);
        }
        Object result;
        try {
            result = proceed(invocation, joinPoint);
        } catch (Throwable failure) {
            new Outcomes(methodLimits, target, targetClass, args, taken).settle(null, failure);
            throw failure;
        }
        new Outcomes(methodLimits, target, targetClass, args, taken).settle(result, null);
        return result;
    }

    private static @Nullable Object proceed(@Nullable Invocation invocation, @Nullable ProceedingJoinPoint joinPoint)
            throws Throwable {
        return invocation != null ? invocation.proceed() : Objects.requireNonNull(joinPoint).proceed();
    }

    /** The limits of a method as a call brings it, found without making a key. */
    private MethodLimits limitsForCall(Method method, Class<?> targetClass) {
        for (CalledOn called = calls.get(method); called != null; called = called.next) {
            if (called.targetClass == targetClass) {
                return called.limits;
            }
        }
        Method specific = BridgeMethodResolver.findBridgedMethod(ClassUtils.getMostSpecificMethod(method, targetClass));
        MethodLimits methodLimits = limitsFor(specific, targetClass);
        calls.compute(method, (m, first) -> {
            for (CalledOn called = first; called != null; called = called.next) {
                if (called.targetClass == targetClass) {
                    return first;
                }
            }
            return new CalledOn(targetClass, methodLimits, first);
        });
        return methodLimits;
    }

    /** The call-scoped listeners for the call starting on this thread. */
    private List<RateLimitListener> listenersForThisCall() {
        if (callScopedListeners.isEmpty()) {
            return List.of();
        }
        List<RateLimitListener> heard = new ArrayList<>(callScopedListeners.size());
        for (CallScopedListener scoped : callScopedListeners) {
            RateLimitListener listener = scoped.forThisCall();
            if (listener != null) {
                heard.add(listener);
            }
        }
        return heard;
    }

    private static void tell(List<RateLimitListener> heard, RateLimiter limiter, String key, Decision decision) {
        for (int i = 0; i < heard.size(); i++) {
            heard.get(i).onDecision(limiter, key, decision);
        }
    }

    /** Tells of a rejection as the limiter's listeners heard it: a call the overloaded store refused as such. */
    private static void tell(List<RateLimitListener> heard, RateLimiter limiter, String key,
                             RateLimitExceededException rejection) {
        if (!(rejection.getCause() instanceof StoreOverloadedException overload)) {
            tell(heard, limiter, key, rejection.decision());
            return;
        }
        for (int i = 0; i < heard.size(); i++) {
            heard.get(i).onStoreOverloaded(limiter, key, rejection.decision(), overload);
        }
    }

    /**
     * Decides a call, or a subscription, through every limiter's asynchronous path, in
     * declaration order: evaluates its expressions now, on this thread, and asks the limiters
     * one after the other without blocking. A limiter whose condition is false is left out; a
     * call one limiter rejects gives back what limiters counting by outcome took before.
     *
     * @return a stage completing once every limiter admitted the call, with what the limiters
     *         counting calls by their outcome took, or failing with
     *         {@code RateLimitExceededException} (or {@code RateLimitKeyException})
     */
    private CompletableFuture<List<Taken>> admitAsync(MethodLimit[] methodLimits, @Nullable Object[] args,
                                                      @Nullable EvaluationContext context,
                                                      List<RateLimitListener> heard) {
        CompletableFuture<?> admitted = CompletableFuture.completedFuture(null);
        // Written by one stage after another, each completing before the next starts.
        List<Taken> taken = new ArrayList<>(0);
        // The wait of the limiter in hand, and whether the caller cancelled: then no limiter after it is asked.
        AtomicReference<CompletableFuture<?>> waiting = new AtomicReference<>(admitted);
        CompletableFuture<Void> cancelled = new CompletableFuture<>();
        for (MethodLimit limit : methodLimits) {
            String counted;
            long permits;
            String planned;
            try {
                if (!limit.applies(args, context)) {
                    continue;
                }
                counted = limit.key(args, context);
                permits = limit.cost(args, context);
                planned = limit.plan(args, context);
            } catch (RateLimitKeyException error) {
                try {
                    if (!limit.sharesKeyAfter(error)) {
                        continue;
                    }
                } catch (RateLimitKeyException rejected) {
                    // After the limiters before it have decided, so that what they took is given back.
                    admitted = admitted.thenCompose(previous -> CompletableFuture.failedFuture(rejected));
                    break;
                }
                counted = KEY_OF_FAILED_EXPRESSIONS;
                permits = 1;
                planned = null;
            }
            String key = counted;
            long cost = permits;
            String plan = planned;
            admitted = admitted.thenCompose(previous -> {
                if (cancelled.isDone()) {
                    return CompletableFuture.failedFuture(new CancellationException());
                }
                CompletableFuture<Decision> acquiring = limit.limiter.acquireAsync(key, cost, plan).toCompletableFuture();
                waiting.set(acquiring);
                if (cancelled.isDone()) {
                    acquiring.cancel(false);
                }
                return acquiring.whenComplete((decision, failure) -> {
                        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                                ? failure.getCause() : failure;
                        if (decision != null) {
                            tell(heard, limit.limiter, key, decision);
                            if (limit.tracksCall()) {
                                taken.add(new Taken(limit, key, cost, plan, registry.clock().instant()));
                            }
                        } else if (cause instanceof RateLimitExceededException rejection) {
                            tell(heard, limit.limiter, key, rejection);
                        }
                    });
            });
        }
        // A rejected or cancelled call does not run: it has no outcome to be counted by, and holds no permit.
        CompletableFuture<?> line = admitted;
        CompletableFuture<List<Taken>> result = !endsCalls(methodLimits) ? admitted.thenApply(done -> taken)
                : admitted.handle((done, failure) -> failure)
                        .thenCompose(failure -> failure == null ? CompletableFuture.completedFuture(taken)
                                : endAsync(taken).thenCompose(given -> CompletableFuture.<List<Taken>>failedFuture(failure)));
        result.whenComplete((done, failure) -> {
            if (result.isCancelled()) {
                // Out of the line of the limiter the caller waits for, which gives its permit back.
                cancelled.complete(null);
                waiting.get().cancel(false);
                // What the limiters before it took goes back once the line has let go of the caller.
                line.whenComplete((ignored, error) -> endAsync(taken));
            }
        });
        return result;
    }

    /**
     * {@code derived}, whose cancellation cancels {@code source} too: a caller that gives up on a
     * call waiting for its permits leaves the line it waits in.
     */
    private static <T> CompletableFuture<T> cancelling(CompletableFuture<T> derived, CompletableFuture<?> source) {
        derived.whenComplete((value, failure) -> {
            if (derived.isCancelled()) {
                source.cancel(false);
            }
        });
        return derived;
    }

    /** Whether a call that does not run has something to give back: permits counted by outcome, or held. */
    private static boolean endsCalls(MethodLimit[] methodLimits) {
        for (MethodLimit limit : methodLimits) {
            if (limit.countsByOutcome() || limit.limiter.holdsPermits()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Limits an asynchronous call whose limiters count it by its outcome or fall back: the
     * future the method returned, completing after the permits its outcome does not count are
     * given back, or the rejecting limiter's fallback's future.
     */
    private CompletableFuture<@Nullable Object> limitAsync(MethodLimits methodLimits, @Nullable Object target,
                                                          Class<?> targetClass, @Nullable Object[] args,
                                                          @Nullable EvaluationContext context,
                                                          List<RateLimitListener> heard, Invocation later) {
        CompletableFuture<@Nullable Object> result = new CompletableFuture<>();
        CompletableFuture<List<Taken>> admission = admitAsync(methodLimits.limits, args, context, heard);
        admission.whenComplete((taken, failure) -> {
            if (failure != null) {
                fallBackAsync(methodLimits, target, args, failure, result);
                return;
            }
            proceedAsync(later.copy()).whenComplete((value, error) -> new Outcomes(methodLimits, target, targetClass,
                    args, taken).ran(value, unwrapped(error)).whenComplete((given, ignored) -> {
                        if (error != null) {
                            result.completeExceptionally(error instanceof CompletionException ? error
                                    : new CompletionException(error));
                        } else {
                            result.complete(value);
                        }
                    }));
        });
        return cancelling(result, admission);
    }

    /** Completes an asynchronous call's result after its admission failed: with the fallback's result, or the failure. */
    private static void fallBackAsync(MethodLimits methodLimits, @Nullable Object target, @Nullable Object[] args,
                                      Throwable failure, CompletableFuture<@Nullable Object> result) {
        Throwable cause = unwrapped(failure);
        CompletionStage<@Nullable Object> fallback = null;
        if (cause instanceof RateLimitExceededException rejection) {
            try {
                @SuppressWarnings("unchecked")
                CompletionStage<@Nullable Object> returned =
                        (CompletionStage<@Nullable Object>) methodLimits.fallBack(target, args, rejection);
                fallback = returned;
            } catch (Throwable fallbackFailure) {
                fallback = CompletableFuture.failedFuture(fallbackFailure);
            }
        }
        if (fallback == null) {
            result.completeExceptionally(failure instanceof CompletionException ? failure
                    : new CompletionException(failure));
            return;
        }
        fallback.whenComplete((value, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
            } else {
                result.complete(value);
            }
        });
    }

    /** The exception a stage failed with, without the {@link CompletionException} around it. */
    private static @Nullable Throwable unwrapped(@Nullable Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /**
     * Ends, on this thread, a call that did not run: gives back what it took where its limiter
     * counts by outcome, and the permits it held; the call stays counted where that fails.
     */
    private static void end(List<Taken> taken) {
        for (Taken permit : taken) {
            permit.end(false);
        }
    }

    /** {@link #end(List)} without blocking; the stage never fails. */
    private static CompletableFuture<?> endAsync(List<Taken> taken) {
        if (taken.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<?>[] given = new CompletableFuture<?>[taken.size()];
        for (int i = 0; i < given.length; i++) {
            given[i] = taken.get(i).endAsync(false);
        }
        return CompletableFuture.allOf(given);
    }

    /**
     * The permits one limiter counting by outcome, holding permits while calls run, or counting
     * again when calls end, took for a call, and when it admitted it. A call ends once: then its
     * held permits are released, and those its outcome does not count are given back.
     */
    private record Taken(MethodLimit limit, String key, long cost, @Nullable String plan, Instant admittedAt,
                         boolean holds, AtomicBoolean ended) {

        Taken(MethodLimit limit, String key, long cost, @Nullable String plan, Instant admittedAt) {
            this(limit, key, cost, plan, admittedAt, limit.limiter.holdsPermits(), new AtomicBoolean());
        }

        /**
         * Ends the call on this thread, once: gives back its permits if they do not count and the
         * limiter counts by outcome, and releases those it held; where that fails they stay taken.
         */
        void end(boolean counted) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            if (!counted && limit.countsByOutcome()) {
                try {
                    limit.limiter.giveBack(key, cost, plan, admittedAt);
                } catch (RuntimeException e) {
                    limit.storeOperationFailed("give back", e);
                }
            }
            if (holds) {
                try {
                    limit.limiter.release(key, cost, plan, admittedAt);
                } catch (RuntimeException e) {
                    limit.storeOperationFailed("release", e);
                }
            }
        }

        /** Ends the call without blocking, as {@link #end} does; never fails. */
        CompletableFuture<?> endAsync(boolean counted) {
            if (!ended.compareAndSet(false, true)) {
                return CompletableFuture.completedFuture(null);
            }
            CompletableFuture<?> given = !counted && limit.countsByOutcome()
                    ? settled("give back", () -> limit.limiter.giveBackAsync(key, cost, plan, admittedAt))
                    : CompletableFuture.completedFuture(null);
            return !holds ? given : CompletableFuture.allOf(given,
                    settled("release", () -> limit.limiter.releaseAsync(key, cost, plan, admittedAt)));
        }

        /** A store operation's stage, which never fails: a failure is logged, the permits staying as they were. */
        private CompletableFuture<?> settled(String operation, Supplier<CompletionStage<Void>> operationCall) {
            CompletionStage<Void> done;
            try {
                done = operationCall.get();
            } catch (RuntimeException e) {
                done = CompletableFuture.failedFuture(e);
            }
            return done.toCompletableFuture().handle((ignored, failure) -> {
                if (failure != null) {
                    limit.storeOperationFailed(operation, unwrapped(failure));
                }
                return null;
            });
        }

        /**
         * Counts the permits again from now, the call having ended, if the limiter does so;
         * without blocking, and never failing.
         */
        CompletableFuture<?> recountAsync() {
            if (!limit.recountsWhenDone) {
                return CompletableFuture.completedFuture(null);
            }
            return settled("count again", () -> limit.limiter.recountAsync(key, cost, plan, admittedAt));
        }
    }

    /**
     * An admitted call of limiters counting it by its outcome: once it has run, each such
     * limiter's {@code countOn} and {@code unless} decide whether its permit stays taken.
     */
    private final class Outcomes implements SubscribedCalls.Admitted {

        private final MethodLimits methodLimits;
        private final @Nullable Object target;
        private final Class<?> targetClass;
        private final @Nullable Object[] args;
        private final List<Taken> taken;

        Outcomes(MethodLimits methodLimits, @Nullable Object target, Class<?> targetClass, @Nullable Object[] args,
                 List<Taken> taken) {
            this.methodLimits = methodLimits;
            this.target = target;
            this.targetClass = targetClass;
            this.args = args;
            this.taken = taken;
        }

        @Override
        public boolean countsByOutcome() {
            return !taken.isEmpty();
        }

        /**
         * Ends the call on this thread: gives back the permits the outcome says do not count,
         * releases those held while it ran, and counts the others again from now where their
         * limiter does so.
         */
        void settle(@Nullable Object result, @Nullable Throwable exception) {
            List<Taken> notCounted = notCounted(result, exception);
            for (Taken permit : taken) {
                permit.end(!notCounted.contains(permit));
            }
            recountAsync(notCounted);
        }

        @Override
        public CompletionStage<?> ran(@Nullable Object result, @Nullable Throwable exception) {
            List<Taken> notCounted = notCounted(result, exception);
            CompletableFuture<?>[] ended = new CompletableFuture<?>[taken.size() + 1];
            for (int i = 0; i < taken.size(); i++) {
                ended[i] = taken.get(i).endAsync(!notCounted.contains(taken.get(i)));
            }
            ended[taken.size()] = recountAsync(notCounted);
            return CompletableFuture.allOf(ended);
        }

        @Override
        public void cancelled() {
            for (Taken permit : taken) {
                permit.endAsync(true);
            }
        }

        /** Counts again from now the permits that stay counted, of limiters that do so; never fails. */
        private CompletableFuture<?> recountAsync(List<Taken> notCounted) {
            List<CompletableFuture<?>> counted = new ArrayList<>(taken.size());
            for (Taken permit : taken) {
                if (!notCounted.contains(permit)) {
                    counted.add(permit.recountAsync());
                }
            }
            return CompletableFuture.allOf(counted.toArray(CompletableFuture<?>[]::new));
        }

        private List<Taken> notCounted(@Nullable Object result, @Nullable Throwable exception) {
            List<Taken> notCounted = new ArrayList<>(taken.size());
            EvaluationContext context = null;
            for (Taken permit : taken) {
                MethodLimit limit = permit.limit;
                if (!limit.countsByOutcome()) {
                    continue;
                }
                boolean counts = limit.countOn.isEmpty() || exception != null && limit.countsOn(exception);
                if (counts && limit.unless != null) {
                    if (context == null) {
                        context = expressions.outcomeContext(methodLimits.method, methodLimits.arguments, args, target,
                                targetClass, result, exception);
                    }
                    counts = !limit.unless(args, context);
                }
                if (!counts) {
                    notCounted.add(permit);
                }
            }
            return notCounted;
        }
    }

    /** Proceeds with an admitted asynchronous call: the future the method returned. */
    private static CompletionStage<@Nullable Object> proceedAsync(Invocation invocation) {
        try {
            @SuppressWarnings("unchecked")
            CompletionStage<@Nullable Object> result = (CompletionStage<@Nullable Object>) invocation.proceed();
            return result;
        } catch (Throwable failure) {
            return CompletableFuture.failedFuture(failure);
        }
    }

    /**
     * The result of a call decided when subscribed: each subscription evaluates the expressions
     * (with the subscriber's Context current), asks the call-scoped listeners, and is decided
     * asynchronously before the method runs.
     */
    private @Nullable Object limitSubscriptions(MethodLimits methodLimits, SubscribedCalls subscribed,
                                                @Nullable Object target, Class<?> targetClass,
                                                @Nullable Object[] args, Invocation invocation) {
        // A suspend function's last argument is the caller's continuation, not a parameter expressions name.
        @Nullable Object[] arguments = methodLimits.suspending && args != null && args.length > 0
                ? Arrays.copyOf(args, args.length - 1) : args;
        Supplier<CompletionStage<SubscribedCalls.Admitted>> admission = () -> {
            EvaluationContext context = methodLimits.needsContext
                    ? expressions.context(methodLimits.method, methodLimits.arguments, arguments, target, targetClass)
                    : null;
            CompletableFuture<List<Taken>> admitted = admitAsync(methodLimits.limits, arguments, context,
                    listenersForThisCall());
            return cancelling(admitted.thenApply(taken -> new Outcomes(methodLimits, target, targetClass, arguments,
                    taken)), admitted);
        };
        return subscribed.result(admission, invocation, rejection -> methodLimits.fallBack(target, arguments, rejection));
    }

    /**
     * What a subscription proceeds with in code the aspect advises: the join point, unless the
     * method is a suspend function woven by AspectJ, which cannot be limited without blocking.
     */
    private static Invocation joinPoint(MethodLimits methodLimits, ProceedingJoinPoint joinPoint) {
        if (methodLimits.suspending && !(joinPoint instanceof MethodInvocationProceedingJoinPoint)) {
            throw wovenSuspendingFunction(methodLimits.method);
        }
        return joinPoint::proceed;
    }

    /**
     * The failure of a limit on a Kotlin {@code suspend} function in code woven by AspectJ, which
     * sees it as a method taking a {@code Continuation} and returning as soon as it suspends.
     *
     * @param method the suspend function
     * @return the exception naming the method
     */
    public static RateLimitConfigurationException wovenSuspendingFunction(Method method) {
        return RateLimitConfigurationException.invalid(method, "@RateLimited", "is on a Kotlin suspend function,"
                + " which code woven by AspectJ cannot limit without blocking its caller: limit it through Spring"
                + " proxies (@EnableRateLimiting in its default PROXY mode), which decide each call when the"
                + " function is awaited");
    }

    /**
     * Whether the calls of a method are decided when subscribed rather than when it is called: a
     * Kotlin suspend function, or a method returning a reactive type (see the class description).
     *
     * @param method the method
     * @return {@code true} for a suspend function or a reactive return type
     */
    public static boolean isDecidedOnSubscription(Method method) {
        return KotlinDetector.isSuspendingFunction(method) || isReactive(method.getReturnType());
    }

    /**
     * Whether a class is reactive for Sluice without Reactor's help: Spring's
     * {@link ReactiveAdapterRegistry} knows it (other than a {@link CompletionStage}), or it is a
     * Reactive Streams, JDK or Kotlin {@code Flow} publisher.
     */
    static boolean isReactive(Class<?> type) {
        if (CompletionStage.class.isAssignableFrom(type) || type.isPrimitive() || type == Object.class) {
            return false;
        }
        if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null) {
            return true;
        }
        for (Class<?> current = type; current != null; current = current.getSuperclass()) {
            if (PUBLISHERS.contains(current.getName())) {
                return true;
            }
        }
        return ClassUtils.getAllInterfacesForClassAsSet(type).stream().anyMatch(i -> PUBLISHERS.contains(i.getName()));
    }

    /**
     * How calls of a method are decided when subscribed; {@code null} when they are decided when
     * made.
     *
     * @throws RateLimitConfigurationException when a method decided on subscription cannot be
     *                                         limited in this application
     */
    private static @Nullable SubscribedCalls subscribedCalls(Method method) {
        if (KotlinDetector.isSuspendingFunction(method)) {
            if (!COROUTINES_REACTOR_PRESENT) {
                throw RateLimitConfigurationException.invalid(method, "@RateLimited", "is on a Kotlin suspend"
                        + " function, which Spring proxies only hand to their advice as a publisher, to be decided"
                        + " when awaited, with kotlinx-coroutines-reactor on the class path: add"
                        + " org.jetbrains.kotlinx:kotlinx-coroutines-reactor");
            }
            if (!KotlinDetector.isKotlinReflectPresent()) {
                throw RateLimitConfigurationException.invalid(method, "@RateLimited", "is on a Kotlin suspend"
                        + " function, which Spring proxies only call through Kotlin reflection: add"
                        + " org.jetbrains.kotlin:kotlin-reflect");
            }
            return ReactiveCalls.forSuspendingFunction(method);
        }
        Class<?> type = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(type)) {
            return null;
        }
        if (REACTOR_PRESENT) {
            return ReactiveCalls.forReturnType(method);
        }
        if (isReactive(type)) {
            throw RateLimitConfigurationException.invalid(method, "@RateLimited", "is on a method returning "
                    + type.getName() + ", a reactive type whose calls are decided when subscribed, which needs"
                    + " Project Reactor: add io.projectreactor:reactor-core to the class path");
        }
        return null;
    }

    /**
     * The limiters of a method, parsing and validating its annotations on first use.
     *
     * @param method      the method
     * @param targetClass the class whose instance is called
     * @return the limiters in declaration order; empty when the method is not limited
     * @throws RateLimitConfigurationException when the annotations are invalid
     */
    public List<RateLimiter> limitersFor(Method method, Class<?> targetClass) {
        return Arrays.stream(limitsFor(method, targetClass).limits).map(limit -> limit.limiter).toList();
    }

    /**
     * Parses and validates every limited method of a class, so that mistakes surface at
     * start-up rather than on the first call.
     *
     * @param targetClass the class
     * @throws RateLimitConfigurationException naming the first invalid annotation
     */
    public void validate(Class<?> targetClass) {
        Class<?> userClass = ClassUtils.getUserClass(targetClass);
        if (LimitDefinitionParser.isCandidate(userClass)) {
            LimitDefinitionParser.rejectInterfaceAnnotations(userClass);
            ReflectionUtils.doWithMethods(userClass, method -> limitersFor(method, userClass),
                    ReflectionUtils.USER_DECLARED_METHODS);
        }
    }

    /**
     * The registry every limiter of this method rate limiter lives in.
     *
     * @return the registry
     */
    public RateLimiterRegistry registry() {
        return registry;
    }

    /**
     * The contributed variables ({@link RateLimitVariables#names()}, such as {@code ip} and
     * {@code request}) that the key, cost and plan expressions of a method's limits read, which no
     * parameter of the method stands for: what only the caller's surroundings can give.
     *
     * @param method      the method
     * @param targetClass the class whose instance is called
     * @return by expression, described as {@code key expression '#ip'}, the variable names it
     *         reads, without {@code #}; only expressions that read any; empty when the method is
     *         not limited
     * @throws RateLimitConfigurationException when the annotations are invalid
     */
    public Map<String, List<String>> contributedVariables(Method method, Class<?> targetClass) {
        Map<String, List<String>> uses = new LinkedHashMap<>();
        for (MethodLimit limit : limitsFor(method, targetClass).limits) {
            Map<String, MethodExpression> expressions = new LinkedHashMap<>();
            expressions.put("key", limit.key);
            expressions.put("cost", limit.cost);
            expressions.put("plan", limit.plan);
            expressions.put("condition", limit.condition);
            expressions.put("unless", limit.unless);
            expressions.forEach((attribute, expression) -> {
                if (expression != null && !expression.contributedVariables().isEmpty()) {
                    uses.put(attribute + " expression '" + expression.text() + "'", expression.contributedVariables());
                }
            });
        }
        return uses;
    }

    private MethodLimits limitsFor(Method method, Class<?> targetClass) {
        MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
        MethodLimits cached = limits.get(cacheKey);
        if (cached == null) {
            cached = limits.computeIfAbsent(cacheKey, k -> build(method, targetClass));
        }
        return cached;
    }

    private MethodLimits build(Method method, Class<?> targetClass) {
        List<ParsedLimit> parsedLimits = parser.parse(method, targetClass);
        // Before any limiter is registered: a method whose calls cannot be limited leaves none behind.
        SubscribedCalls subscribed = parsedLimits.isEmpty() ? null : subscribedCalls(method);
        List<MethodLimit> built = new ArrayList<>();
        for (ParsedLimit parsed : parsedLimits) {
            String name = parsed.definition().name();
            if (parsed.defaultName()) {
                Class<?> owner = defaultNames.putIfAbsent(name, targetClass);
                if (owner != null && owner != targetClass) {
                    throw RateLimitConfigurationException.invalid(method, "name", "defaults to '" + name
                            + "', as it does for " + owner.getName() + ": the two would share counters. Give one"
                            + " of them a name");
                }
            }
            try {
                RateLimiter.builder().name(name);
            } catch (IllegalArgumentException e) {
                throw RateLimitConfigurationException.invalid(method, "limiter", e.getMessage() + (parsed.defaultName()
                        ? "; it is the default name, made of the class and method names: give the limiter a name"
                        : ""), e);
            }
            RateLimiter rateLimiter;
            try {
                rateLimiter = registry.register(parsed.definition());
            } catch (IllegalArgumentException e) {
                throw RateLimitConfigurationException.invalid(method, "limiter '" + name + "'", "cannot be built: "
                        + e.getMessage(), e);
            }
            if (parsed.countsByOutcome()) {
                checkCountsByOutcome(method, parsed, rateLimiter, subscribed);
            }
            built.add(new MethodLimit(method, rateLimiter, parsed.key(), parsed.cost(), parsed.plan(), parsed.fixedCost(),
                    Objects.requireNonNullElse(parsed.definition().onKeyError(), onKeyError), registry,
                    parsed.condition(), parsed.unless(), parsed.countOn(), parsed.fallback(),
                    recountsWhenDone(rateLimiter)));
        }
        return new MethodLimits(method, built.toArray(new MethodLimit[0]), expressions.arguments(method), subscribed);
    }

    /**
     * Whether a limiter's calls count again from when they end: a limiter that waits is one for
     * calls to a partner, which counts each call when it arrives, some time before the method
     * returns; counted again then, a sliding log holds to the partner's window whatever the time
     * the call travelled. Only where the store can, and a tier is a sliding log.
     */
    private static boolean recountsWhenDone(RateLimiter limiter) {
        if (limiter.onLimit() != OnLimit.WAIT || !limiter.recounts()) {
            return false;
        }
        return Stream.concat(Stream.of(limiter.tiers()), limiter.plans().values().stream())
                .flatMap(List::stream).anyMatch(tier -> tier.algorithm() == Algorithm.SLIDING_LOG);
    }

    /**
     * Fails for a limiter counting calls by their outcome where that cannot be done: on a store
     * that cannot give permits back, or reading {@code #result} of a method that publishes many.
     */
    private static void checkCountsByOutcome(Method method, ParsedLimit parsed, RateLimiter limiter,
                                             @Nullable SubscribedCalls subscribed) {
        String attribute = parsed.unless() != null ? "unless" : "countOn";
        if (subscribed != null && subscribed.multiValue() && parsed.unless() != null
                && parsed.unless().reads("result")) {
            throw RateLimitConfigurationException.invalid(method, "unless", "'" + parsed.unless().text() + "' reads"
                    + " #result, but the method publishes any number of values, so a call has no one result: read"
                    + " #exception only");
        }
        if (!limiter.givesBack()) {
            throw RateLimitConfigurationException.invalid(method, attribute, "counts the calls of limiter '"
                    + limiter.name() + "' by their outcome, giving back the permits of calls that do not count, which"
                    + " its store (" + limiter.store().getClass().getSimpleName() + ") cannot do: use the in-memory"
                    + " or the Redis script store (RedissonRateLimitStore) for this limiter");
        }
    }

    /** The limits of one method for one target class, with what a call of it needs to know up front. */
    private static final class MethodLimits {

        final Method method;
        final MethodLimit[] limits;
        final Expressions.Arguments arguments;
        /** Whether an expression needs a context of the call. */
        final boolean needsContext;
        /** Whether the method returns a future, so that its limits are decided asynchronously. */
        final boolean async;
        /** Whether the method is a Kotlin suspend function, whose last argument is a continuation. */
        final boolean suspending;
        /** For a method decided when subscribed, what its calls return; otherwise {@code null}. */
        final @Nullable SubscribedCalls subscribed;
        /** Whether a limiter counts calls by their outcome, or again when they end. */
        final boolean countsByOutcome;
        /** Whether a limiter has a fallback. */
        final boolean fallsBack;

        MethodLimits(Method method, MethodLimit[] limits, Expressions.Arguments arguments,
                     @Nullable SubscribedCalls subscribed) {
            this.method = method;
            this.limits = limits;
            this.arguments = arguments;
            boolean needs = false;
            boolean byOutcome = false;
            boolean fallback = false;
            for (MethodLimit limit : limits) {
                needs |= limit.key != null && limit.key.needsContext();
                needs |= limit.cost != null && limit.cost.needsContext();
                needs |= limit.plan != null && limit.plan.needsContext();
                needs |= limit.condition != null && limit.condition.needsContext();
                byOutcome |= limit.tracksCall();
                fallback |= limit.fallback != null;
            }
            this.needsContext = needs;
            this.countsByOutcome = byOutcome;
            this.fallsBack = fallback;
            Class<?> returnType = method.getReturnType();
            this.async = returnType == CompletionStage.class || returnType == CompletableFuture.class;
            this.suspending = KotlinDetector.isSuspendingFunction(method);
            this.subscribed = limits.length == 0 ? null : subscribed;
        }

        /** Whether a limiter's calls hold permits while they run, as its limits stand now. */
        boolean holdsPermits() {
            for (MethodLimit limit : limits) {
                if (limit.limiter.holdsPermits()) {
                    return true;
                }
            }
            return false;
        }

        /**
         * What the fallback of the limiter that rejected a call returns for it.
         *
         * @throws Throwable the rejection, when that limiter has no fallback; what the fallback threw
         */
        @Nullable Object fallBack(@Nullable Object target, @Nullable Object[] args, RateLimitExceededException rejection)
                throws Throwable {
            for (MethodLimit limit : limits) {
                if (limit.fallback != null && limit.limiter.name().equals(rejection.limiterName())) {
                    return limit.fallback.call(target, args, rejection);
                }
            }
            throw rejection;
        }
    }

    /** The limits of a method called on one class, and on the next class it is called on. */
    private record CalledOn(Class<?> targetClass, MethodLimits limits, @Nullable CalledOn next) {
    }

    /** One limiter of a method with its parsed expressions, and what a call does when they fail. */
    private record MethodLimit(Method method, RateLimiter limiter, @Nullable MethodExpression key,
                               @Nullable MethodExpression cost, @Nullable MethodExpression plan, long fixedCost,
                               KeyErrorPolicy onKeyError, RateLimiterRegistry registry,
                               @Nullable MethodExpression condition, @Nullable MethodExpression unless,
                               List<Class<? extends Throwable>> countOn, @Nullable Fallback fallback,
                               boolean recountsWhenDone) {

        /** Whether the limiter counts calls by their outcome, giving back the permits of some. */
        boolean countsByOutcome() {
            return unless != null || !countOn.isEmpty();
        }

        /** Whether a call's permits are kept track of until it ends: to give back, release or count again. */
        boolean tracksCall() {
            return countsByOutcome() || recountsWhenDone || limiter.holdsPermits();
        }

        /** Whether the limiter applies to a call: its condition, if any, is true. */
        boolean applies(@Nullable Object[] args, @Nullable EvaluationContext context) {
            if (condition == null) {
                return true;
            }
            Object value = evaluated("condition", condition, args, context);
            if (value instanceof Boolean applies) {
                return applies;
            }
            throw failed("condition expression '" + condition.text() + "' evaluated to "
                    + (value == null ? "null" : "a " + value.getClass().getSimpleName()) + "; a condition must be"
                    + " true or false", null);
        }

        /** Whether a call that threw counts, by {@code countOn}. */
        boolean countsOn(Throwable exception) {
            for (Class<? extends Throwable> type : countOn) {
                if (type.isInstance(exception)) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Whether {@code unless} lets a call off, in the context of its outcome. One that fails,
         * or gives no {@code Boolean}, does not: the call stays counted, the strict side.
         */
        boolean unless(@Nullable Object[] args, EvaluationContext context) {
            Object value;
            try {
                value = Objects.requireNonNull(unless).value(args, context);
            } catch (RuntimeException e) {
                LOGGER.log(System.Logger.Level.WARNING, () -> "The unless expression '" + unless.text() + "' of rate"
                        + " limiter '" + limiter.name() + "' failed (" + e.getClass().getName() + "); the call stays"
                        + " counted");
                return false;
            }
            if (value instanceof Boolean letOff) {
                return letOff;
            }
            LOGGER.log(System.Logger.Level.WARNING, () -> "The unless expression '" + unless.text() + "' of rate"
                    + " limiter '" + limiter.name() + "' gave " + (value == null ? "null" : "a "
                    + value.getClass().getName()) + " instead of true or false; the call stays counted");
            return false;
        }

        /** A give-back or recount that failed other than by an outage, which the limiter answers itself. */
        void storeOperationFailed(String operation, Throwable failure) {
            LOGGER.log(System.Logger.Level.WARNING, () -> "Rate limiter '" + limiter.name() + "' could not "
                    + operation + " a permit (" + failure.getClass().getName() + "); it stays counted as it was",
                    failure);
        }

        /**
         * What a call whose key or cost expression failed does, as the limiter's
         * {@link KeyErrorPolicy} says: {@code true} to count it under the key of failed
         * expressions, {@code false} to go ahead without this limiter.
         *
         * @throws RateLimitKeyException under {@link KeyErrorPolicy#REJECT}
         */
        boolean sharesKeyAfter(RateLimitKeyException error) {
            for (RateLimitListener listener : registry.listeners()) {
                listener.onKeyError(limiter, error);
            }
            return switch (onKeyError) {
                case REJECT -> throw error;
                case SHARED_KEY -> true;
                case SKIP -> false;
            };
        }

        /** The key of a call. */
        String key(@Nullable Object[] args, @Nullable EvaluationContext context) {
            if (key == null) {
                return "";
            }
            String text;
            try {
                Object value = key.value(args, context);
                text = value == null ? null : ObjectUtils.nullSafeToString(value);
            } catch (RuntimeException e) {
                throw failed("key", key, e);
            }
            if (text == null || text.isBlank()) {
                // Start-up checked the expression's variables: a null here is a null value, not a missing name.
                throw failed("key expression '" + key.text() + "' evaluated to "
                        + (text == null ? "null" : "a blank string") + "; a key must identify the caller", null);
            }
            return text;
        }

        /** The plan of a call; {@code null} for the default tiers. */
        @Nullable String plan(@Nullable Object[] args, @Nullable EvaluationContext context) {
            if (plan == null) {
                return null;
            }
            Object value = evaluated("plan", plan, args, context);
            return value == null ? null : value.toString();
        }

        /** The permits a call takes. */
        long cost(@Nullable Object[] args, @Nullable EvaluationContext context) {
            if (cost == null) {
                return fixedCost;
            }
            Object value = evaluated("cost", cost, args, context);
            if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
                long permits = ((Number) value).longValue();
                if (permits >= 1) {
                    return permits;
                }
            }
            throw failed("cost expression '" + cost.text() + "' evaluated to "
                    + (value == null ? "null" : value instanceof Number ? value : "a " + value.getClass().getSimpleName())
                    + "; a cost must be a whole number of at least 1", null);
        }

        /** An expression's value for a call; its failure as the call's error. */
        private @Nullable Object evaluated(String attribute, MethodExpression expression, @Nullable Object[] args,
                                           @Nullable EvaluationContext context) {
            try {
                return expression.value(args, context);
            } catch (RuntimeException e) {
                throw failed(attribute, expression, e);
            }
        }

        /** The failure of an expression as the call's error: as it is when it says what failed already. */
        private RateLimitKeyException failed(String attribute, MethodExpression expression, RuntimeException failure) {
            return failure instanceof RateLimitKeyException known ? known : failed(attribute + " expression '"
                    + expression.text() + "' failed: " + failure.getMessage(), failure);
        }

        private RateLimitKeyException failed(String problem, @Nullable Throwable cause) {
            return new RateLimitKeyException(limiter.name(), "Rate limiter '" + limiter.name() + "' of "
                    + RateLimitConfigurationException.describe(method) + " cannot count this call: its " + problem,
                    cause);
        }
    }

    /** Configures a {@link MethodRateLimiter}. Not thread-safe; build once. */
    public static final class Builder {

        private @Nullable RateLimiterRegistry registry;
        private StringValueResolver placeholders = new StandardEnvironment()::resolveRequiredPlaceholders;
        private LimitOverrides overrides = LimitOverrides.NONE;
        private RateLimitVariables variables = RateLimitVariables.NONE;
        private @Nullable BeanResolver beanResolver;
        private KeyErrorPolicy onKeyError = KeyErrorPolicy.REJECT;
        private final List<CallScopedListener> callScopedListeners = new ArrayList<>();

        private Builder() {
        }

        /**
         * Adds a listener asked on the calling thread of each limited call for a listener of
         * that call's decisions, which may complete on other threads.
         *
         * @param listener the call-scoped listener
         * @return this builder
         */
        public Builder callScopedListener(CallScopedListener listener) {
            callScopedListeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * The registry the limiters are built and registered in, which gives them their store,
         * clock, sleeper, failure policy and listeners.
         *
         * @param registry default: a registry of its own, deciding in memory
         * @return this builder
         */
        public Builder registry(RateLimiterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Resolves {@code ${...}} placeholders in names, windows, waits and messages.
         *
         * @param placeholders default: system properties and environment variables; under
         *                     Spring, the application's {@code Environment}
         * @return this builder
         */
        public Builder placeholders(StringValueResolver placeholders) {
            this.placeholders = Objects.requireNonNull(placeholders, "placeholders");
            return this;
        }

        /**
         * What a limiter's calls do when their key or cost expression gives no value, unless
         * its annotation says otherwise ({@code onKeyError}).
         *
         * @param onKeyError default {@link KeyErrorPolicy#REJECT}
         * @return this builder
         */
        public Builder onKeyError(KeyErrorPolicy onKeyError) {
            this.onKeyError = Objects.requireNonNull(onKeyError, "onKeyError");
            return this;
        }

        /**
         * Limits set in configuration, taking precedence over annotations.
         *
         * @param overrides default {@link LimitOverrides#NONE}
         * @return this builder
         */
        public Builder overrides(LimitOverrides overrides) {
            this.overrides = Objects.requireNonNull(overrides, "overrides");
            return this;
        }

        /**
         * Extra variables for key and cost expressions.
         *
         * @param variables default {@link RateLimitVariables#NONE}
         * @return this builder
         */
        public Builder variables(RateLimitVariables variables) {
            this.variables = Objects.requireNonNull(variables, "variables");
            return this;
        }

        /**
         * Resolves {@code @bean} references in expressions.
         *
         * @param beanResolver default none: expressions cannot refer to beans
         * @return this builder
         */
        public Builder beanResolver(BeanResolver beanResolver) {
            this.beanResolver = Objects.requireNonNull(beanResolver, "beanResolver");
            return this;
        }

        /**
         * Builds the method rate limiter.
         *
         * @return a new instance with its own cache of parsed methods
         */
        public MethodRateLimiter build() {
            return new MethodRateLimiter(this);
        }
    }
}
