package dev.sluice.gateway;

import dev.sluice.annotation.Algorithm;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How a gateway route is limited, on either gateway: a limiter of {@code sluice.limits} by its
 * name, or tiers of the route's own; the key and plan expressions. Bound from a route's arguments
 * ({@code sluice-rate-limiter.*} on the WebFlux gateway, the {@code RateLimit} filter's arguments on
 * the Server MVC gateway) or set in Java, with the setters or the methods that return the options.
 *
 * @param <O> the options' own type, which those methods return
 */
public abstract class RouteLimitOptions<O extends RouteLimitOptions<O>> {

    private @Nullable String limiter;
    private List<SluiceProperties.TierProperties> tiers = new ArrayList<>();
    private String key = "";
    private String plan = "";

    /**
     * The limiter of {@code sluice.limits.<name>} whose tiers and plans limit the route; routes
     * naming the same limiter share its counts.
     *
     * @return its name, or {@code null} when the route has tiers of its own
     */
    public @Nullable String getLimiter() {
        return limiter;
    }

    /**
     * Sets the limiter of {@code sluice.limits.<name>} whose tiers and plans limit the route.
     *
     * @param limiter its name
     */
    public void setLimiter(@Nullable String limiter) {
        this.limiter = limiter;
    }

    /**
     * The route's own tiers, all of which a request must pass; the route's limiter is then named
     * by the route's id, and its plans are {@code sluice.limits.<route id>.plans}.
     *
     * @return the tiers; empty when the route names a limiter
     */
    public List<SluiceProperties.TierProperties> getTiers() {
        return tiers;
    }

    /**
     * Sets the route's own tiers.
     *
     * @param tiers the tiers
     */
    public void setTiers(List<SluiceProperties.TierProperties> tiers) {
        this.tiers = tiers;
    }

    /**
     * A SpEL expression giving the key a request is counted under, over {@code #ip} (the client
     * address through {@code sluice.web.trusted-proxies}), {@code #request} and {@code #path} (the
     * variables of the route's path pattern); blank for the gateway's own key.
     *
     * @return the expression
     */
    public String getKey() {
        return key;
    }

    /**
     * Sets the key expression.
     *
     * @param key a SpEL expression, or blank
     */
    public void setKey(String key) {
        this.key = key;
    }

    /**
     * A SpEL expression over the same variables giving the plan a request is on: a plan of the
     * limiter's {@code sluice.limits.<name>.plans}; {@code null}, blank or unknown plans take the
     * default tiers.
     *
     * @return the expression; blank for none
     */
    public String getPlan() {
        return plan;
    }

    /**
     * Sets the plan expression.
     *
     * @param plan a SpEL expression, or blank
     */
    public void setPlan(String plan) {
        this.plan = plan;
    }

    /**
     * Names the limiter of {@code sluice.limits} that limits the route.
     *
     * @param limiter the limiter's name
     * @return these options
     */
    public O limiter(String limiter) {
        setLimiter(limiter);
        return self();
    }

    /**
     * Adds a tier of the route's own, counted by a sliding window.
     *
     * @param limit  requests per window
     * @param window the window
     * @return these options
     */
    public O tier(long limit, Duration window) {
        return tier(limit, window, Algorithm.SLIDING_WINDOW);
    }

    /**
     * Adds a tier of the route's own.
     *
     * @param limit     requests per window
     * @param window    the window
     * @param algorithm how the tier counts
     * @return these options
     */
    public O tier(long limit, Duration window, Algorithm algorithm) {
        SluiceProperties.TierProperties tier = new SluiceProperties.TierProperties();
        tier.setLimit(limit);
        tier.setWindow(window);
        tier.setAlgorithm(algorithm);
        tiers.add(tier);
        return self();
    }

    /**
     * Counts requests under the key a SpEL expression gives, over {@code #ip}, {@code #request}
     * and {@code #path}.
     *
     * @param expression the expression
     * @return these options
     */
    public O keyExpression(String expression) {
        setKey(expression);
        return self();
    }

    /**
     * Chooses each request's plan by a SpEL expression over {@code #ip}, {@code #request} and
     * {@code #path}.
     *
     * @param expression the expression
     * @return these options
     */
    public O plan(String expression) {
        setPlan(expression);
        return self();
    }

    @SuppressWarnings("unchecked")
    private O self() {
        return (O) this;
    }
}
