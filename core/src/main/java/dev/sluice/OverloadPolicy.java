package dev.sluice;

/**
 * What a store that queues decisions does with those beyond its queue: more are waiting than it
 * may hold, or one has waited longer than it may. Either way it is a spike, not an outage: the
 * store's circuit breaker does not count it and the limiter's failure policy does not apply.
 */
public enum OverloadPolicy {

    /**
     * The decision is refused with {@link StoreOverloadedException}, which a limiter answers as a
     * rejection: HTTP {@code 429} with {@code Retry-After}, never {@code 503}. Nothing passes
     * unchecked, and a shared limit never admits more than its figure. The default.
     */
    REJECT,

    /**
     * The decision is made in this JVM, by an in-memory store with the same tiers, as
     * {@link dev.sluice.annotation.FailurePolicy#LOCAL_FALLBACK} makes it: every limit holds per
     * instance, so a limit shared by {@code n} instances admits up to {@code n} times its figure
     * while the spike lasts. Counts made locally are not carried over to the store.
     */
    LOCAL_FALLBACK
}
