package dev.sluice.gateway;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * A {@code KeyResolver} that lets every request of a route through to {@link SluiceGatewayRateLimiter}
 * under the route's id, registered as the bean {@code sluiceKeyResolver}: with it, a route's key is
 * its {@code sluice-rate-limiter.key} expression ({@code #ip}, a header, a path variable), or one
 * key for the whole route without one. Spring Cloud Gateway's default resolver gives a key only
 * to requests of a signed-in principal, and refuses the others with 403.
 *
 * <p>The bean is not a default candidate, so it does not replace the gateway's default resolver;
 * routes name it: {@code key-resolver: "#{@sluiceKeyResolver}"}.
 */
public final class SluiceKeyResolver implements KeyResolver {

    SluiceKeyResolver() {
    }

    /**
     * The id of the exchange's route.
     *
     * @param exchange the exchange
     * @return the route's id; empty outside a route
     */
    @Override
    public Mono<String> resolve(ServerWebExchange exchange) {
        Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
        return route == null ? Mono.empty() : Mono.just(route.getId());
    }
}
