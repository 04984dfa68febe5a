package dev.sluice.aop;

import dev.sluice.RateLimitListener;
import org.jspecify.annotations.Nullable;

/**
 * Hears the decisions of one limited method call, whichever thread they complete on. It is
 * asked on the thread making the call, before any limiter decides, so it can capture what
 * belongs to that thread (the Spring Boot starter captures the current HTTP request, to put
 * rate-limit headers on its response); the listener it returns then hears each limiter's final
 * decision for the call, admitted or rejected, possibly on a store's or a scheduler's thread.
 */
@FunctionalInterface
public interface CallScopedListener {

    /**
     * A listener for the call now starting on this thread.
     *
     * @return the listener, or {@code null} when this call is of no interest (outside a web
     *         request, say)
     */
    @Nullable RateLimitListener forThisCall();
}
