package dev.sluice.annotation;

/**
 * What a rate-limited call does when a limit does not admit it.
 *
 * @see RateLimited#onLimit()
 */
public enum OnLimit {

    /**
     * Fail at once with {@code dev.sluice.RateLimitExceededException} (for methods returning a
     * {@code CompletionStage}, a future failed with it). The right choice for inbound calls:
     * the Spring Boot starter turns the exception into HTTP 429.
     */
    REJECT,

    /**
     * Wait until the call fits, for at most {@link RateLimited#maxWait()}, then reject. The
     * right choice for outbound calls to an API that caps the caller. With token buckets the
     * store reserves the permit, due later, in the one call that decides it, so waiting callers
     * are served in the order they came. Methods returning a {@code CompletionStage} never
     * block their caller: the wait is scheduled.
     */
    WAIT
}
