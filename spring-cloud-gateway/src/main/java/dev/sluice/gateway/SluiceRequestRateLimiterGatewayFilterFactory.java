package dev.sluice.gateway;

import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import java.util.Objects;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;

/**
 * The WebFlux gateway's {@code RequestRateLimiter} filter factory as Sluice's gateway
 * auto-configuration puts it in place of the gateway's: a route whose rate limiter is
 * {@link SluiceGatewayRateLimiter} gets Sluice's filter, any other route the gateway's own, made
 * by the gateway's factory with its settings.
 *
 * <p>Sluice's filter answers as Sluice does everywhere, where the gateway's would answer otherwise:
 * a request the route's {@code KeyResolver} gives no key follows {@code sluice.key-error} (the
 * gateway's filter answers {@code 403} without asking the rate limiter), and a refused request
 * gets Sluice's problem (the gateway's filter ends it with a status and no body). The route's
 * options are checked, and its limiter registered, when its filter is made: for a Java DSL route,
 * while the application starts. The filter's arguments that would change those answers
 * ({@code status-code}, {@code deny-empty-key}, {@code empty-key-status}, {@code throw-on-limit})
 * are refused on such a route, naming it.
 */
final class SluiceRequestRateLimiterGatewayFilterFactory extends RequestRateLimiterGatewayFilterFactory {

    /** The gateway's factory, bound to its settings, which makes the other routes' filters. */
    private final RequestRateLimiterGatewayFilterFactory gateway;

    SluiceRequestRateLimiterGatewayFilterFactory(RequestRateLimiterGatewayFilterFactory gateway) {
        super(gateway.getDefaultRateLimiter(), gateway.getDefaultKeyResolver());
        this.gateway = gateway;
    }

    @Override
    public GatewayFilter apply(Config config) {
        RateLimiter<?> rateLimiter = config.getRateLimiter() != null ? config.getRateLimiter() : getDefaultRateLimiter();
        if (!(rateLimiter instanceof SluiceGatewayRateLimiter sluice)) {
            return gateway.apply(config);
        }
        String routeId = config.getRouteId();
        if (routeId != null) {
            refuseGatewayAnswers(routeId, config);
            sluice.route(routeId);
        }
        KeyResolver keyResolver = config.getKeyResolver() != null ? config.getKeyResolver() : getDefaultKeyResolver();
        return (exchange, chain) -> sluice.filter(routeId != null ? routeId : routeOf(exchange), keyResolver,
                exchange, chain);
    }

    /** The id of the exchange's route, for a filter made without one. */
    private static String routeOf(ServerWebExchange exchange) {
        Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
        return Objects.requireNonNull(route, "the exchange's route").getId();
    }

    private static void refuseGatewayAnswers(String routeId, Config config) {
        String argument = config.getStatusCode() != HttpStatus.TOO_MANY_REQUESTS ? "status-code"
                : config.getDenyEmptyKey() != null ? "deny-empty-key"
                : config.getEmptyKeyStatus() != null ? "empty-key-status"
                : config.getThrowOnLimit() != null ? "throw-on-limit" : null;
        if (argument != null) {
            throw new SluiceConfigurationException("Route '" + routeId + "' is limited by sluiceRateLimiter and sets"
                    + " the RequestRateLimiter filter's " + argument + ", which such routes do not use: Sluice"
                    + " answers a refused request with its 429 problem and a request without a key by"
                    + " sluice.key-error", "Remove " + argument + " from the route; choose what requests without a"
                    + " key get with sluice.key-error (reject, shared-key or skip).", null);
        }
    }

    // The settings are the gateway's factory's, which makes the other routes' filters.

    @Override
    public String name() {
        return gateway.name();
    }

    @Override
    public boolean isDenyEmptyKey() {
        return gateway.isDenyEmptyKey();
    }

    @Override
    public void setDenyEmptyKey(boolean denyEmptyKey) {
        gateway.setDenyEmptyKey(denyEmptyKey);
    }

    @Override
    public String getEmptyKeyStatusCode() {
        return gateway.getEmptyKeyStatusCode();
    }

    @Override
    public void setEmptyKeyStatusCode(String emptyKeyStatusCode) {
        gateway.setEmptyKeyStatusCode(emptyKeyStatusCode);
    }

    @Override
    public boolean isThrowOnLimit() {
        return gateway.isThrowOnLimit();
    }

    @Override
    public void setThrowOnLimit(boolean throwOnLimit) {
        gateway.setThrowOnLimit(throwOnLimit);
    }
}
