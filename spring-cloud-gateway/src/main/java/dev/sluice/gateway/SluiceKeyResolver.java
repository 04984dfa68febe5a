package dev.sluice.gateway;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * A {@code KeyResolver} that gives every request of a route the route's id, registered as the bean
 * {@code sluiceKeyResolver}: on a route limited by {@link SluiceGatewayRateLimiter} without a key
 * expression, all the route's requests are then counted under one key. A route with a key
 * expression ({@code sluice-rate-limiter.key}: {@code #ip}, a header, a path variable) needs no
 * key resolver: the expression gives the key.
 *
 * <p>The bean is not a default candidate, so it does not replace the gateway's default resolver
 * (the signed-in principal's name); routes name it: {@code key-resolver: "#{@sluiceKeyResolver}"}.
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
