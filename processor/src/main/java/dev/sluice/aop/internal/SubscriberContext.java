package dev.sluice.aop.internal;

import dev.sluice.aop.CallScopedListener;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitVariables;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * The Reactor {@link ContextView Context} of the subscription being decided, for code that
 * works out a reactive call's key without a thread of its own: a {@link RateLimitVariables}
 * giving {@code #ip} or {@code #request} from the {@code ServerWebExchange} a WebFlux
 * application puts in the Context, or a {@link CallScopedListener} capturing it for
 * rate-limit headers.
 *
 * <p>A method returning {@code Mono}, {@code Flux} or another reactive type, and a Kotlin
 * {@code suspend} function, is decided when its result is subscribed, once per subscription.
 * While {@link MethodRateLimiter} evaluates that subscription's {@code key}, {@code cost} and
 * {@code plan} expressions, and while it asks each {@link CallScopedListener} for a listener of
 * it, {@link #current()} is the subscriber's Context, on the subscribing thread; at any other
 * time, on any other thread, it is {@code null}. So read it from
 * {@link RateLimitVariables#value(String)} or {@link CallScopedListener#forThisCall()}, not
 * later: decisions may complete on other threads.
 *
 * <pre class="code">
 * public Object value(String name) {             // a RateLimitVariables giving #ip
 *     ContextView context = SubscriberContext.current();
 *     ServerWebExchange exchange = context == null ? null : context.getOrDefault(EXCHANGE_KEY, null);
 *     return exchange == null ? null : clientAddress(exchange);
 * }
 * </pre>
 *
 * <p>where {@code EXCHANGE_KEY} is the key a web filter wrote the exchange under
 * ({@code contextWrite(Context.of(EXCHANGE_KEY, exchange))}) before the handler subscribed.
 *
 * <p>This class needs Reactor ({@code io.projectreactor:reactor-core}) on the class path;
 * without it nothing is ever decided on subscription, so there is no Context to read: check
 * with {@code ClassUtils.isPresent("reactor.core.publisher.Mono", ...)} before calling it from
 * code that also runs without Reactor.
 *
 * <p>Not API: shared by Sluice's modules (the Spring Boot starter reads it for WebFlux), it may
 * change in any release.
 */
public final class SubscriberContext {

    private static final ThreadLocal<@Nullable ContextView> CURRENT = new ThreadLocal<>();

    private SubscriberContext() {
    }

    /**
     * The Reactor Context of the subscription whose limits are being worked out on this thread.
     *
     * @return the subscriber's Context, or {@code null} when no subscription is being decided on
     *         this thread (a call of a method that is not reactive, say)
     */
    public static @Nullable ContextView current() {
        return CURRENT.get();
    }

    /**
     * Makes {@code context} the current one on this thread.
     *
     * @param context the subscriber's Context
     * @return the one it replaces, to give back to {@link #restore}
     */
    public static @Nullable ContextView enter(ContextView context) {
        ContextView previous = CURRENT.get();
        CURRENT.set(context);
        return previous;
    }

    /**
     * Gives back the Context {@link #enter} replaced.
     *
     * @param previous what {@link #enter} returned
     */
    public static void restore(@Nullable ContextView previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
    }
}
