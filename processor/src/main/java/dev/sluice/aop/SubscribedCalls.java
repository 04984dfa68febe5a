package dev.sluice.aop;

import dev.sluice.aop.internal.SubscriberContext;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What a method whose calls are decided when subscribed returns, for each call: a publisher of
 * the method's own reactive type. Declared without Reactor, so that {@link MethodRateLimiter}
 * loads without it; {@link ReactiveCalls} implements it with Reactor.
 */
interface SubscribedCalls {

    /**
     * The result of one call of the method: for each subscription, {@code admission} is asked
     * on the subscribing thread, with the subscriber's Context as {@link SubscriberContext#current()};
     * once the stage it returns completes, a {@linkplain MethodRateLimiter.Invocation#copy() copy}
     * of the call proceeds and what it publishes is relayed, or, when the stage fails, the
     * subscriber gets its failure as an error signal and the method does not run.
     *
     * @param admission  decides one subscription: a stage completing once every limiter admitted it
     * @param invocation proceeds with the call
     * @return the publisher, of the method's return type
     */
    @Nullable Object result(Supplier<CompletionStage<?>> admission, MethodRateLimiter.Invocation invocation);
}
