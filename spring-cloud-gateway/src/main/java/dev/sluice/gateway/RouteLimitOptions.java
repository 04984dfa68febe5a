package dev.sluice.gateway;

import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How a gateway route is limited, on either gateway: a limiter of {@code sluice.limits} by its
 * name, or tiers of the route's own; the key and plan expressions. Bound from a route's arguments
 * ({@code sluice-rate-limiter.*} on the WebFlux gateway, the {@code RateLimit} filter's arguments on
 * the Server MVC gateway) or set in Java.
 */
public class RouteLimitOptions {

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
}
