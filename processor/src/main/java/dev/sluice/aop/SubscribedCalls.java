package dev.sluice.aop;

import dev.sluice.RateLimitExceededException;
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
     * of the call proceeds and what it publishes is relayed, and once it terminates the admission
     * is told its outcome before the subscriber is. When the stage fails with a rejection, what
     * {@code fallBack} gives is published instead; with any other failure, or when it gives
     * none, the subscriber gets the failure as an error signal and the method does not run.
     *
     * @param admission  decides one subscription: a stage completing once every limiter admitted it
     * @param invocation proceeds with the call
     * @param fallBack   what stands in for a rejected subscription
     * @return the publisher, of the method's return type
     */
    @Nullable Object result(Supplier<CompletionStage<Admitted>> admission, MethodRateLimiter.Invocation invocation,
                            FallBack fallBack);

    /**
     * Whether the method publishes any number of values, so that a call has no single result.
     *
     * @return {@code true} for a {@code Flux}, a {@code Flow} and the like
     */
    boolean multiValue();

    /** An admitted subscription, to be told its outcome. */
    interface Admitted {

        /**
         * Whether the outcome matters: some limiter counts the call by it.
         *
         * @return {@code false} when {@link #ran} has nothing to do
         */
        boolean countsByOutcome();

        /**
         * The call has run: gives back the permits its outcome says do not count.
         *
         * @param result    the single value it published, or {@code null}
         * @param exception what it failed with, or {@code null}
         * @return a stage completing once done; it never fails
         */
        CompletionStage<?> ran(@Nullable Object result, @Nullable Throwable exception);

        /**
         * The subscriber cancelled the call while it ran: releases the permits it held; those it
         * counted stay counted, as it may have done its work. Never fails.
         */
        void cancelled();
    }

    /** What stands in for a rejected call. */
    @FunctionalInterface
    interface FallBack {

        /**
         * The fallback's value for a rejected call.
         *
         * @param rejection the rejection
         * @return what the rejecting limiter's fallback method returned
         * @throws Throwable {@code rejection} itself when that limiter has no fallback, or what
         *                   the fallback threw
         */
        @Nullable Object apply(RateLimitExceededException rejection) throws Throwable;
    }
}
