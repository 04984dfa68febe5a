package dev.sluice.aop;

import dev.sluice.RateLimitExceededException;
import dev.sluice.aop.internal.SubscriberContext;
import java.lang.reflect.Method;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Limits the calls of a method returning a reactive type, or of a Kotlin {@code suspend}
 * function, per subscription, built on Reactor: the method's result is a publisher that
 * decides each subscription through the limiters' asynchronous path and only then proceeds with
 * the call. Types other than Reactor's go through Spring's {@link ReactiveAdapterRegistry}.
 * Only loaded when Reactor is on the class path.
 */
final class ReactiveCalls implements SubscribedCalls {

    private static final String KOTLIN_FLOW = "kotlinx.coroutines.flow.Flow";

    private final Method method;
    /** Converts to and from the method's return type; {@code null} for a suspend function, which proxies await. */
    private final @Nullable ReactiveAdapter adapter;
    /** Whether the result publishes any number of values (a {@code Flux}) rather than at most one (a {@code Mono}). */
    private final boolean multiValue;

    private ReactiveCalls(Method method, @Nullable ReactiveAdapter adapter, boolean multiValue) {
        this.method = method;
        this.adapter = adapter;
        this.multiValue = multiValue;
    }

    /**
     * How calls of a method are decided when subscribed, if its return type is reactive.
     *
     * @return {@code null} when the return type is not one Spring's registry knows, nor a
     *         publisher
     * @throws RateLimitConfigurationException when it is reactive but its calls cannot be
     *                                         limited per subscription
     */
    static @Nullable SubscribedCalls forReturnType(Method method) {
        Class<?> type = method.getReturnType();
        ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(type);
        if (adapter == null) {
            if (MethodRateLimiter.isReactive(type)) {
                throw unsupported(method, "no adapter of Spring's ReactiveAdapterRegistry makes one from a publisher");
            }
            return null;
        }
        if (!type.isAssignableFrom(adapter.getReactiveType())) {
            throw unsupported(method, "Spring's ReactiveAdapterRegistry only makes a " + adapter.getReactiveType().getName()
                    + " of a publisher, not this subtype of it");
        }
        if (!adapter.getDescriptor().isDeferred()) {
            throw unsupported(method, "it is not deferred: its work starts when it is made, not when it is subscribed");
        }
        return new ReactiveCalls(method, adapter, adapter.isMultiValue());
    }

    /**
     * How calls of a Kotlin {@code suspend} function are decided. A Spring proxy calls the
     * function's advice with a {@code Continuation} as last argument; proceeding returns a
     * {@code Mono} of the function's result (a {@code Flux} when it returns a {@code Flow} or
     * a publisher other than a {@code Mono}), and the proxy awaits what the advice returns in the
     * same way. So the advice returns a publisher of the same kind, which decides the call when
     * the proxy subscribes to it.
     */
    static SubscribedCalls forSuspendingFunction(Method method) {
        Class<?> returned = new MethodParameter(method, -1).getParameterType();
        boolean multiValue = isA(returned, KOTLIN_FLOW)
                || Publisher.class.isAssignableFrom(returned) && !Mono.class.isAssignableFrom(returned);
        return new ReactiveCalls(method, null, multiValue);
    }

    private static RateLimitConfigurationException unsupported(Method method, String why) {
        return RateLimitConfigurationException.invalid(method, "@RateLimited", "is on a method returning "
                + method.getReturnType().getName() + ", a reactive type whose calls are decided when subscribed, but "
                + why + ", so its subscriptions could not be limited: return Mono, Flux, or a type Spring's"
                + " ReactiveAdapterRegistry knows (RxJava 3, Kotlin Flow, Publisher, Mutiny)");
    }

    /** Whether a class is, or extends or implements, the class named {@code name}. */
    private static boolean isA(@Nullable Class<?> type, String name) {
        if (type == null) {
            return false;
        }
        if (type.getName().equals(name) || isA(type.getSuperclass(), name)) {
            return true;
        }
        for (Class<?> implemented : type.getInterfaces()) {
            if (isA(implemented, name)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean multiValue() {
        return multiValue;
    }

    @Override
    public @Nullable Object result(Supplier<CompletionStage<Admitted>> admission, MethodRateLimiter.Invocation invocation,
                                   FallBack fallBack) {
        // A rejection becomes the fallback's publisher here, before the call would run, so that
        // a rejection the method itself publishes is relayed as it is.
        // Cancelling the subscription while it waits for a permit takes it out of line.
        Mono<Object> decided = Mono.deferContextual(context -> Mono.fromFuture(admit(admission, context)
                        .toCompletableFuture(), false))
                .cast(Object.class)
                .onErrorResume(RateLimitExceededException.class, rejection -> fallenBack(fallBack, rejection));
        Publisher<Object> limited = multiValue
                ? decided.flatMapMany(admitted -> admitted instanceof FallenBack fallen ? Flux.from(fallen.publisher())
                        : ran(Flux.defer(() -> Flux.from(proceed(invocation))), (Admitted) admitted))
                : decided.flatMap(admitted -> admitted instanceof FallenBack fallen ? Mono.from(fallen.publisher())
                        : ran(Mono.defer(() -> Mono.from(proceed(invocation))), (Admitted) admitted));
        return adapter != null ? adapter.fromPublisher(limited) : limited;
    }

    /** The publisher standing in for a rejected subscription, or the rejection when none does. */
    private Mono<Object> fallenBack(FallBack fallBack, RateLimitExceededException rejection) {
        Object fallback;
        try {
            fallback = fallBack.apply(rejection);
        } catch (Throwable failure) {
            return Mono.error(failure);
        }
        return Mono.just(new FallenBack(published(fallback, "its fallback")));
    }

    /** What a fallback published, standing where the admission would have been. */
    private record FallenBack(Publisher<Object> publisher) {
    }

    /** A call's values, its admission told of its outcome before the subscriber hears that it ended. */
    private static Mono<Object> ran(Mono<Object> call, Admitted admitted) {
        if (!admitted.countsByOutcome()) {
            return call;
        }
        return call.materialize().flatMap(signal -> Mono.fromCompletionStage(admitted.ran(signal.get(),
                signal.getThrowable())).then(Mono.just(signal))).<Object>dematerialize().doOnCancel(admitted::cancelled);
    }

    /** {@link #ran(Mono, Admitted)} for many values: the outcome is whether it failed. */
    private static Flux<Object> ran(Flux<Object> call, Admitted admitted) {
        if (!admitted.countsByOutcome()) {
            return call;
        }
        return call.onErrorResume(failure -> Mono.fromCompletionStage(admitted.ran(null, failure))
                        .then(Mono.error(failure)))
                .concatWith(Mono.defer(() -> Mono.fromCompletionStage(admitted.ran(null, null))).then(Mono.empty()))
                .doOnCancel(admitted::cancelled);
    }

    /** Decides one subscription, with its Context current while expressions and listeners need it. */
    private static CompletionStage<Admitted> admit(Supplier<CompletionStage<Admitted>> admission,
                                                  ContextView context) {
        ContextView previous = SubscriberContext.enter(context);
        try {
            return admission.get();
        } finally {
            SubscriberContext.restore(previous);
        }
    }

    /** Proceeds with a copy of the call for an admitted subscription: what the method publishes. */
    private Publisher<Object> proceed(MethodRateLimiter.Invocation invocation) {
        Object result;
        try {
            result = invocation.copy().proceed();
        } catch (Throwable failure) {
            return Mono.error(failure);
        }
        return published(result, "it");
    }

    /** What a call of the method, or of its fallback, publishes: its result as a publisher. */
    @SuppressWarnings("unchecked")
    private Publisher<Object> published(@Nullable Object result, String called) {
        if (result == null && (adapter == null || !adapter.getDescriptor().supportsEmpty())) {
            return Mono.error(new NullPointerException(RateLimitConfigurationException.describe(method)
                    + (called.equals("it") ? "" : ": " + called) + " returned null instead of a "
                    + method.getReturnType().getSimpleName()));
        }
        if (adapter != null) {
            return adapter.toPublisher(result);
        }
        if (result instanceof Publisher<?> publisher) {
            return (Publisher<Object>) publisher;
        }
        return Mono.error(new IllegalStateException("Proceeding with " + RateLimitConfigurationException.describe(method)
                + " gave a " + result.getClass().getName() + " rather than a publisher: a Spring proxy without"
                + " kotlinx-coroutines-reactor does not adapt suspend functions"));
    }
}
