package dev.sluice;

import dev.sluice.annotation.Algorithm;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A store that forwards every call to another one: the base of decorators (timing, counting,
 * logging), which override only what they add to. Because every method of
 * {@link RateLimitStore} is forwarded, default ones included, a decorator keeps every capability
 * of the store it wraps: a decorated store that {@linkplain #reserves reserves} permits still
 * does, and its circuit breaker is still seen. A store that extends {@code RateLimitStore} should
 * extend this class to decorate another, not implement the interface: a new method of the
 * interface is then forwarded too.
 *
 * <pre class="code">
 * final class LoggingStore extends ForwardingRateLimitStore {
 *     LoggingStore(RateLimitStore store) {
 *         super(store);
 *     }
 *
 *     &#64;Override
 *     public Decision tryAcquire(String key, List&lt;Tier&gt; tiers, long cost) {
 *         Decision decision = super.tryAcquire(key, tiers, cost);
 *         log(decision);
 *         return decision;
 *     }
 * }
 * </pre>
 *
 * <p>A {@link RateLimiter} decides calls with an {@link InMemoryRateLimitStore} without going
 * through the store interface, which takes a few dozen nanoseconds off each decision. Over a
 * decorator it can do so only if the decorator lets it, with a {@link #decisionObserver()}:
 * otherwise the limiter calls the decorator, as a decorator that changes or counts calls needs.
 *
 * @see RateLimitStore
 */
public abstract class ForwardingRateLimitStore implements RateLimitStore {

    private final RateLimitStore delegate;

    /**
     * Decorates a store.
     *
     * @param delegate the store every call is forwarded to
     */
    protected ForwardingRateLimitStore(RateLimitStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /**
     * The store decorated.
     *
     * @return the store every call is forwarded to
     */
    public final RateLimitStore delegate() {
        return delegate;
    }

    /**
     * The store beneath any decorators: the store itself unless it forwards, else what the
     * innermost of its forwarding decorators forwards to.
     *
     * @param store a store, decorated or not
     * @return the store that decides
     */
    public static RateLimitStore beneath(RateLimitStore store) {
        RateLimitStore beneath = Objects.requireNonNull(store, "store");
        while (beneath instanceof ForwardingRateLimitStore decorator) {
            beneath = decorator.delegate;
        }
        return beneath;
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        return delegate.tryAcquire(key, tiers, cost);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        return delegate.tryAcquireAsync(key, tiers, cost);
    }

    @Override
    public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
        return delegate.reserve(key, tiers, cost, maxWait);
    }

    @Override
    public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
        return delegate.reserveAsync(key, tiers, cost, maxWait);
    }

    @Override
    public boolean reserves(Tier tier) {
        return delegate.reserves(tier);
    }

    @Override
    public void reset(String key, List<Tier> tiers) {
        delegate.reset(key, tiers);
    }

    @Override
    public void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
        delegate.giveBack(key, tiers, cost, ago);
    }

    @Override
    public CompletionStage<Void> giveBackAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        return delegate.giveBackAsync(key, tiers, cost, ago);
    }

    @Override
    public boolean givesBack(Tier tier) {
        return delegate.givesBack(tier);
    }

    @Override
    public void pause(String key, List<Tier> tiers, Duration duration) {
        delegate.pause(key, tiers, duration);
    }

    @Override
    public CompletionStage<Void> pauseAsync(String key, List<Tier> tiers, Duration duration) {
        return delegate.pauseAsync(key, tiers, duration);
    }

    @Override
    public boolean pauses(Tier tier) {
        return delegate.pauses(tier);
    }

    @Override
    public void recount(String key, List<Tier> tiers, long cost, Duration ago) {
        delegate.recount(key, tiers, cost, ago);
    }

    @Override
    public CompletionStage<Void> recountAsync(String key, List<Tier> tiers, long cost, Duration ago) {
        return delegate.recountAsync(key, tiers, cost, ago);
    }

    @Override
    public boolean recounts(Tier tier) {
        return delegate.recounts(tier);
    }

    @Override
    public Optional<StoreCircuitBreaker> circuitBreaker() {
        return delegate.circuitBreaker();
    }

    @Override
    public Optional<StoreQueue> queue() {
        return delegate.queue();
    }

    @Override
    public Set<Algorithm> supportedAlgorithms() {
        return delegate.supportedAlgorithms();
    }

    @Override
    public boolean supports(Tier tier) {
        return delegate.supports(tier);
    }

    /**
     * Lets a limiter whose store this is decide its synchronous calls with the
     * {@link InMemoryRateLimitStore} beneath this decorator (directly, or through other
     * decorators that let it too) without calling this decorator's {@link #tryAcquire} or
     * {@link #reserve}; the observer returned is told of each such decision instead. Return one
     * only from a decorator that observes decisions and changes none of them, such as one timing
     * them. A limiter asks once, when it is built.
     *
     * @return the observer; by default {@code null}: limiters call this decorator
     */
    protected @Nullable DecisionObserver decisionObserver() {
        return null;
    }

    /**
     * Told of the decisions a {@link RateLimiter} makes beneath a decorator without calling it
     * (see {@link #decisionObserver()}). Called on the deciding thread around each decision;
     * implementations are quick and never throw.
     */
    public interface DecisionObserver {

        /**
         * A decision is about to be made.
         *
         * @return anything the observer wants back when the decision is made, or {@code null}
         */
        @Nullable Object deciding();

        /**
         * The decision has been made, or the store failed.
         *
         * @param deciding what {@link #deciding()} returned for this decision
         */
        void decided(@Nullable Object deciding);
    }
}
