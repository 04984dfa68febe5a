package dev.sluice;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where rate-limit state lives, and the one place a decision is made.
 *
 * <p>A store decides all tiers of one key atomically: a call fits when every tier admits its
 * cost; then every tier counts it. A call that does not fit is counted by none of them,
 * except tiers with {@link Tier#countRejected()}. A tier with a {@link Tier#blockFor()} that
 * rejects a call blocks the key for that long. The limit definition travels with every call;
 * stores keep counters, never configuration, so a changed limit applies at once. State is
 * kept per key, algorithm and window: changing a tier's limit keeps its counts.
 *
 * <p>Every implementation passes the store contract suite ({@code sluice-store-tck}), which
 * pins down each algorithm and every {@link Decision} figure. Implementations are
 * thread-safe. A store decorating another extends {@link ForwardingRateLimitStore}.
 *
 * <p>There is no method forgetting every key: on a Redis store that means scanning the whole
 * keyspace, which no code holding a store should be able to do by mistake. Stores offer it as a
 * {@code clear()} of their own, for tests ({@code dev.sluice.tck.RateLimitStores#clear}).
 *
 * @see InMemoryRateLimitStore
 * @see ForwardingRateLimitStore
 */
public interface RateLimitStore {

    /**
     * Decides one call and, if it fits, counts it.
     *
     * @param key   the key, already qualified by the limiter's name
     * @param tiers the key's tiers, at least one; no two with the same algorithm and window
     * @param cost  permits the call takes, from 1 to the smallest limit among the tiers
     * @return the decision
     * @throws IllegalArgumentException when the request is malformed (see {@link #check})
     * @throws UnsupportedOperationException when a tier is not {@linkplain #supports supported}
     * @throws StoreUnavailableException when the store cannot decide (unreachable, too slow, its
     *         circuit breaker open); any other exception is taken for such a failure too, except
     *         programming errors ({@code NullPointerException}, {@code IllegalStateException},
     *         {@code ClassCastException} and the two above), which reach the caller, unless the
     *         breaker or limiter is set otherwise ({@link StoreCircuitBreaker.Builder#recordExceptions})
     */
    Decision tryAcquire(String key, List<Tier> tiers, long cost);

    /**
     * Decides one call without blocking the calling thread; otherwise the same as
     * {@link #tryAcquire}. Malformed requests and store failures complete the stage
     * exceptionally.
     *
     * @param key   the key, already qualified by the limiter's name
     * @param tiers the key's tiers
     * @param cost  permits the call takes
     * @return the decision, when made
     */
    CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost);

    /**
     * Decides one call for a caller that may wait up to {@code maxWait} for its permit. A store
     * that {@linkplain #reserves reserves} the call's tiers and finds that the call does not fit
     * now, but would within {@code maxWait}, takes its permits now at the time they will be due:
     * its tiers run into debt, so calls after it are due later still, and the caller sleeps the
     * reservation's {@linkplain Reservation#delay delay} without asking again. A key under a
     * block is not reserved. Otherwise the call is decided as by {@link #tryAcquire} (this
     * default).
     *
     * @param key     the key, already qualified by the limiter's name
     * @param tiers   the key's tiers
     * @param cost    permits the call takes
     * @param maxWait the longest the caller would wait; zero decides as {@link #tryAcquire} does
     * @return the decision, and for a reserved permit, the time until it is due
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException when a tier is not {@linkplain #supports supported}
     * @throws StoreUnavailableException when the store cannot decide
     */
    default Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
        check(this, key, tiers, cost, maxWait);
        return Reservation.now(tryAcquire(key, tiers, cost));
    }

    /**
     * Reserves as {@link #reserve} does, without blocking the calling thread. Malformed requests
     * and store failures complete the stage exceptionally.
     *
     * @param key     the key, already qualified by the limiter's name
     * @param tiers   the key's tiers
     * @param cost    permits the call takes
     * @param maxWait the longest the caller would wait
     * @return the reservation, when made
     */
    default CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
        try {
            check(this, key, tiers, cost, maxWait);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return tryAcquireAsync(key, tiers, cost).thenApply(Reservation::now);
    }

    /**
     * Whether this store {@linkplain #reserve reserves} the permits of calls whose every tier is
     * like {@code tier}; by default it never does, and waiting callers ask again when told to.
     *
     * @param tier a tier
     * @return whether calls whose tiers are all such tiers can be reserved
     */
    default boolean reserves(Tier tier) {
        return false;
    }

    /**
     * Forgets one key's state: the counts of every tier and any block, so that its next call is
     * decided as a fresh key's. This is how an operator unblocks a caller. Stores keeping state
     * per tier forget at least {@code tiers}; other state of the key may expire as usual.
     *
     * @param key   the key, already qualified by the limiter's name
     * @param tiers the key's tiers, at least one; no two with the same algorithm and window
     * @throws IllegalArgumentException when the request is malformed (see
     *         {@link #check(RateLimitStore, String, List)})
     * @throws UnsupportedOperationException when the store cannot forget a key (this default), or
     *         cannot hold a tier
     * @throws StoreUnavailableException when the store cannot be reached in time
     */
    default void reset(String key, List<Tier> tiers) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot reset a key");
    }

    /**
     * Gives back the permits of a call this store admitted, as if it had not been made: each
     * tier counts what it would count without the call, in the window the call was admitted in
     * while that window still counts. A fixed or sliding window takes the cost off the window
     * the call was counted in; a sliding log drops one entry of the same cost admitted no later
     * than the call; a token bucket gets back what of the cost it has not refilled since. Blocks
     * and the counts of rejected calls stay as they are: giving back never restricts. A call the
     * key has forgotten since (expired, reset) is not given back. Limiters call it for calls
     * whose outcome says they do not count ({@code @RateLimited(unless = …)}).
     *
     * @param key   the key, already qualified by the limiter's name
     * @param tiers the tiers the call was decided with
     * @param cost  the permits the call took
     * @param ago   how long ago the call was admitted; a negative one is taken as zero
     * @throws IllegalArgumentException when the request is malformed (see {@link #check})
     * @throws UnsupportedOperationException when the store cannot give back permits of a tier
     *         (see {@link #givesBack}); by default it never can
     * @throws StoreUnavailableException when the store cannot be reached in time
     */
    default void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot give permits back");
    }

    /**
     * Gives back permits as {@link #giveBack} does, without blocking the calling thread.
     * Malformed requests and store failures complete the stage exceptionally.
     *
     * @param key   the key, already qualified by the limiter's name
     * @param tiers the tiers the call was decided with
     * @param cost  the permits the call took
     * @param ago   how long ago the call was admitted
     * @return a stage completing once the permits are back; by default, running
     *         {@link #giveBack} on the calling thread
     */
    default CompletionStage<Void> giveBackAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        try {
            giveBack(key, tiers, cost, ago);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Whether this store can {@linkplain #giveBack give back} the permits of calls whose tiers
     * are like {@code tier}. Limiters that count calls by their outcome need it, and are refused
     * when they are built on a store that cannot.
     *
     * @param tier a tier
     * @return by default {@code false}
     */
    default boolean givesBack(Tier tier) {
        return false;
    }

    /**
     * Rejects every call of a key until {@code duration} from now, by this store's clock: how a
     * limiter obeys a partner that said "come back later" (an HTTP 429 or 503 with
     * {@code Retry-After}). The key is blocked as a {@link Tier#blockFor()} blocks it: its calls
     * are rejected with the time left of the pause as {@code retryAfter} and {@code resetAfter},
     * none remaining, and none reserved. A pause never shortens a block or pause in place: the
     * later end holds. Counts stay as they are. A key without state gets what it needs to hold the
     * pause, kept at least until the pause ends; then its calls are decided as a fresh key's. A
     * zero or negative {@code duration} changes nothing.
     *
     * @param key      the key, already qualified by the limiter's name
     * @param tiers    the key's tiers, at least one; no two with the same algorithm and window
     * @param duration how long the key stays paused; rounded up to whole milliseconds
     * @throws IllegalArgumentException when the request is malformed (see
     *         {@link #check(RateLimitStore, String, List, Duration)})
     * @throws UnsupportedOperationException when the store cannot pause a key with a tier (see
     *         {@link #pauses}); by default it never can
     * @throws StoreUnavailableException when the store cannot be reached in time
     */
    default void pause(String key, List<Tier> tiers, Duration duration) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot pause a key");
    }

    /**
     * Pauses a key as {@link #pause} does, without blocking the calling thread. Malformed
     * requests and store failures complete the stage exceptionally.
     *
     * @param key      the key, already qualified by the limiter's name
     * @param tiers    the key's tiers
     * @param duration how long the key stays paused
     * @return a stage completing once the key is paused; by default, running {@link #pause} on
     *         the calling thread
     */
    default CompletionStage<Void> pauseAsync(String key, List<Tier> tiers, Duration duration) {
        try {
            pause(key, tiers, duration);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Whether this store can {@linkplain #pause pause} keys whose tiers are like {@code tier}.
     * Limiters that obey a partner's {@code Retry-After} need it.
     *
     * @param tier a tier
     * @return by default {@code false}
     */
    default boolean pauses(Tier tier) {
        return false;
    }

    /**
     * Counts a call this store admitted as if it had been admitted now: how a limiter of calls to
     * a partner that counts each call when it arrives (somewhere between sending it and the
     * answer) keeps its log in step with the partner's. Each sliding log moves one entry of the
     * same cost admitted no later than the call (the entry {@link #giveBack} would drop) to now,
     * so that it leaves the window one window after now. Fixed windows, sliding windows and token
     * buckets keep their counters as they are: they hold no call times. A call the key has
     * forgotten since (expired, reset) is not counted again. Nothing else changes: recounting
     * never rejects and never restricts beyond keeping that one entry longer.
     *
     * @param key   the key, already qualified by the limiter's name
     * @param tiers the tiers the call was decided with
     * @param cost  the permits the call took
     * @param ago   how long ago the call was admitted; a negative one is taken as zero
     * @throws IllegalArgumentException when the request is malformed (see {@link #check})
     * @throws UnsupportedOperationException when the store cannot recount calls of a tier (see
     *         {@link #recounts}); by default it never can
     * @throws StoreUnavailableException when the store cannot be reached in time
     */
    default void recount(String key, List<Tier> tiers, long cost, Duration ago) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot recount a call");
    }

    /**
     * Recounts a call as {@link #recount} does, without blocking the calling thread. Malformed
     * requests and store failures complete the stage exceptionally.
     *
     * @param key   the key, already qualified by the limiter's name
     * @param tiers the tiers the call was decided with
     * @param cost  the permits the call took
     * @param ago   how long ago the call was admitted
     * @return a stage completing once the call is recounted; by default, running
     *         {@link #recount} on the calling thread
     */
    default CompletionStage<Void> recountAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        try {
            recount(key, tiers, cost, ago);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Whether this store can {@linkplain #recount recount} calls whose tiers are like
     * {@code tier}. A store that recounts does so for every algorithm it supports, though only a
     * sliding log changes.
     *
     * @param tier a tier
     * @return by default {@code false}
     */
    default boolean recounts(Tier tier) {
        return false;
    }

    /**
     * The circuit breaker guarding this store's calls, if it has one: its state feeds metrics,
     * health checks and the actuator. Stores that reach over the network should have one (see
     * {@link StoreCircuitBreaker}).
     *
     * @return the breaker; by default none
     */
    default Optional<StoreCircuitBreaker> circuitBreaker() {
        return Optional.empty();
    }

    /**
     * The queue this store's decisions wait in before they are sent, if it has one: its size
     * feeds metrics. Decisions it cannot hold get its {@link OverloadPolicy}.
     *
     * @return the queue; by default none
     */
    default Optional<StoreQueue> queue() {
        return Optional.empty();
    }

    /**
     * The algorithms this store implements; by default every rate algorithm, but not
     * {@link Algorithm#CONCURRENCY}, which a store offers when it holds permits and gives them
     * back (see {@link #giveBack}).
     *
     * @return the supported algorithms
     */
    default Set<Algorithm> supportedAlgorithms() {
        return Checks.RATE_ALGORITHMS;
    }

    /**
     * Whether this store can honour a tier: its algorithm and its options
     * ({@link Tier#countRejected()}, {@link Tier#blockFor()}). By default, whether it
     * implements the algorithm. Requests with a tier the store cannot honour are refused,
     * never decided approximately.
     *
     * @param tier a tier
     * @return whether requests may contain it
     */
    default boolean supports(Tier tier) {
        return supportedAlgorithms().contains(tier.algorithm());
    }

    /**
     * Checks a request the way every store must, so that all stores refuse the same requests
     * with the same messages. Stores call it first.
     *
     * @param store the store asked, for the tiers it {@linkplain #supports supports}
     * @param key   the key: not null
     * @param tiers the tiers: at least one, no two sharing algorithm and window
     * @param cost  the cost: from 1 to the smallest limit
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException when the store cannot honour a tier
     */
    static void check(RateLimitStore store, String key, List<Tier> tiers, long cost) {
        check(store, key, tiers);
        Checks.cost(tiers, cost);
    }

    /**
     * Checks a request to {@linkplain #reserve reserve} permits the way every store must. Stores
     * call it first.
     *
     * @param store   the store asked, for the tiers it {@linkplain #supports supports}
     * @param key     the key: not null
     * @param tiers   the tiers: at least one, no two sharing algorithm and window
     * @param cost    the cost: from 1 to the smallest limit
     * @param maxWait the longest wait: from zero to 2<sup>52</sup> ms, as a limiter's
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException when the store cannot honour a tier
     */
    static void check(RateLimitStore store, String key, List<Tier> tiers, long cost, Duration maxWait) {
        check(store, key, tiers, cost);
        Checks.maxWait(OnLimit.WAIT, maxWait);
    }

    /**
     * Checks a request to {@linkplain #pause pause} a key the way every store must: as a call's,
     * without a cost. Stores call it first.
     *
     * @param store    the store asked, for the tiers it {@linkplain #supports supports}
     * @param key      the key: not null
     * @param tiers    the tiers: at least one, no two sharing algorithm and window
     * @param duration the pause: not null, at most 2<sup>52</sup> ms, as a block; zero or
     *                 negative for none
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException when the store cannot honour a tier
     */
    static void check(RateLimitStore store, String key, List<Tier> tiers, Duration duration) {
        check(store, key, tiers);
        Checks.pause(duration);
    }

    /**
     * Checks a request to {@linkplain #reset reset} a key the way every store must: as a call's,
     * without a cost. Stores call it first.
     *
     * @param store the store asked, for the tiers it {@linkplain #supports supports}
     * @param key   the key: not null
     * @param tiers the tiers: at least one, no two sharing algorithm and window
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException when the store cannot honour a tier
     */
    static void check(RateLimitStore store, String key, List<Tier> tiers) {
        Objects.requireNonNull(key, "key");
        Checks.tiers(tiers);
        for (Tier tier : tiers) {
            if (!store.supports(tier)) {
                throw new UnsupportedOperationException(store.getClass().getSimpleName() + " does not support "
                        + tier + "; it supports " + store.supportedAlgorithms());
            }
        }
    }
}
