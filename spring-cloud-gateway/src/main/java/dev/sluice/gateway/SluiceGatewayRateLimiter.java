package dev.sluice.gateway;

import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.web.reactive.ReactiveRateLimitExceptionHandler;
import dev.sluice.boot.web.reactive.ReactiveRateLimitHeaders;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud Gateway (WebFlux) {@code RateLimiter} deciding with Sluice, registered as the bean
 * {@code sluiceRateLimiter} for the {@code RequestRateLimiter} filter:
 *
 * <pre class="code">
 * filters:
 *   - name: RequestRateLimiter
 *     args:
 *       rate-limiter: "#{&#64;sluiceRateLimiter}"
 *       key-resolver: "#{&#64;sluiceKeyResolver}"
 *       sluice-rate-limiter:
 *         key: "#ip"
 *         tiers:
 *           - { limit: 3, window: 1m }
 * </pre>
 *
 * <p>Each route's options ({@link Config}, under {@value #CONFIGURATION_PROPERTY_NAME}) are bound
 * as Spring Cloud Gateway binds those of its own limiters, through its {@link ConfigurationService}
 * when the route is built; the routes of {@code spring.cloud.gateway.server.webflux.routes} are
 * also checked when the application starts, so that a mistake fails start-up. A route names a
 * limiter of {@code sluice.limits} or has tiers of its own, and its limiter is registered as any
 * other: metrics, the actuator endpoint and {@code sluice.failure-policy} apply to it.
 *
 * <p>Requests are decided without blocking ({@code RateLimiter.acquireAsync}). The key is the one
 * the route's {@code KeyResolver} gives, unless the route has a key expression; the rate-limit
 * headers of the decision ({@code RateLimit-Policy}, {@code RateLimit}, {@code X-RateLimit-*},
 * and {@code Retry-After} on a rejection) are written on the response, merged with those of any
 * other Sluice limit of the request. A request that cannot be checked under {@code FAIL_CLOSED} is
 * answered {@code 503} with a short {@code Retry-After}, and one whose key or plan expression fails
 * under {@code sluice.key-error=reject} {@code 400}, as Sluice answers them elsewhere.
 *
 * @see SluiceKeyResolver
 */
public class SluiceGatewayRateLimiter extends AbstractRateLimiter<SluiceGatewayRateLimiter.Config> {

    /** The prefix of a route's Sluice options among the {@code RequestRateLimiter} filter's arguments. */
    public static final String CONFIGURATION_PROPERTY_NAME = "sluice-rate-limiter";

    private static final Response ADMITTED = new Response(true, Map.of());
    private static final Response REFUSED = new Response(false, Map.of());

    private final RouteLimits limits;
    private final ReactiveRateLimitHeaders headers;
    private final ReactiveRateLimitExceptionHandler answers;
    /** The limits of the routes built so far, by route id; none for a route whose limit is disabled. */
    private final Map<String, RouteLimits.RouteLimit> routes = new ConcurrentHashMap<>();
    private final Map<String, Boolean> disabled = new ConcurrentHashMap<>();

    /** A route's Sluice options, bound from its {@code sluice-rate-limiter.*} arguments. */
    public static class Config extends RouteLimitOptions {
    }

    SluiceGatewayRateLimiter(ConfigurationService configurationService, RouteLimits limits,
                             ReactiveRateLimitHeaders headers, ReactiveRateLimitExceptionHandler answers) {
        super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
        this.limits = limits;
        this.headers = headers;
        this.answers = answers;
    }

    /**
     * Binds a route's options, when they are among the filter's arguments, and registers its
     * limiter.
     *
     * @param event a route's filter arguments
     * @throws dev.sluice.boot.autoconfigure.SluiceConfigurationException when the route's options are invalid
     */
    @Override
    public void onApplicationEvent(FilterArgsEvent event) {
        if (event.getArgs().keySet().stream().noneMatch(key -> key.startsWith(CONFIGURATION_PROPERTY_NAME + "."))) {
            return;
        }
        super.onApplicationEvent(event);
        String routeId = event.getRouteId();
        RouteLimits.RouteLimit limit = limits.limit("route '" + routeId + "' " + CONFIGURATION_PROPERTY_NAME, routeId,
                getConfig().get(routeId));
        if (limit == null) {
            routes.remove(routeId);
            disabled.put(routeId, true);
        } else {
            routes.put(routeId, limit);
            disabled.remove(routeId);
        }
    }

    /**
     * Forgets the routes the gateway no longer has, once it has refreshed them, and the limiters
     * of their own tiers.
     *
     * @param routeIds the ids of the routes it has now
     */
    void retainRoutes(Set<String> routeIds) {
        for (String routeId : List.copyOf(routes.keySet())) {
            if (!routeIds.contains(routeId)) {
                RouteLimits.RouteLimit removed = routes.remove(routeId);
                if (removed != null) {
                    limits.removed(removed);
                }
            }
        }
        disabled.keySet().retainAll(routeIds);
    }

    /**
     * Decides one request of a route, without blocking. The request's exchange, for the key and
     * plan expressions and the headers, is read from the Reactor Context, where Sluice's
     * {@link ServerWebExchangeContextFilter} puts it.
     *
     * @param routeId the route
     * @param id      the key the route's {@code KeyResolver} gave
     * @return whether the request may go on; rate-limit headers are written on the exchange's response
     */
    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        return Mono.deferContextual(context -> {
            RouteLimits.RouteLimit limit = routes.get(routeId);
            if (limit == null) {
                return disabled.containsKey(routeId) ? Mono.just(ADMITTED) : Mono.error(new IllegalStateException(
                        "Route '" + routeId + "' uses sluiceRateLimiter without " + CONFIGURATION_PROPERTY_NAME
                                + " arguments: give it " + CONFIGURATION_PROPERTY_NAME + ".limiter or "
                                + CONFIGURATION_PROPERTY_NAME + ".tiers"));
            }
            ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
            String key;
            String plan;
            try {
                Map<String, @Nullable Object> variables = variables(limit, exchange);
                key = limits.key(limit, variables, id);
                plan = limits.plan(limit, variables);
            } catch (RateLimitKeyException error) {
                try {
                    key = limits.afterKeyError(limit, error);
                } catch (RateLimitKeyException rejected) {
                    return answer(exchange, answers.badRequest(rejected));
                }
                if (key == null) {
                    return Mono.just(ADMITTED);
                }
                plan = null;
            }
            return Mono.fromCompletionStage(limit.limiter().acquireAsync(key, 1, plan))
                    .map(decision -> {
                        if (exchange != null) {
                            headers.writeDecision(exchange, limit.name(), decision);
                        }
                        return ADMITTED;
                    })
                    .onErrorMap(CompletionException.class, failure -> failure.getCause() != null ? failure.getCause()
                            : failure)
                    .onErrorResume(RateLimitExceededException.class, rejection -> {
                        if (exchange == null) {
                            return Mono.just(new Response(false, Map.of("Retry-After",
                                    String.valueOf(Math.max(1, (rejection.retryAfter().toMillis() + 999) / 1000)))));
                        }
                        headers.writeRejection(exchange, rejection.limiterName(), rejection.decision());
                        return Mono.just(REFUSED);
                    })
                    .onErrorResume(StoreUnavailableException.class,
                            unavailable -> answer(exchange, answers.serviceUnavailable(unavailable)));
        });
    }

    /** {@code #ip}, {@code #request} and {@code #path} of the exchange; none without one. */
    private Map<String, @Nullable Object> variables(RouteLimits.RouteLimit limit, @Nullable ServerWebExchange exchange) {
        if (limit.key() == null && limit.plan() == null) {
            return Map.of();
        }
        if (exchange == null) {
            throw new IllegalStateException("Route limit '" + limit.name() + "' has expressions, but the request's"
                    + " exchange is not in the Reactor Context; register a ServerWebExchangeContextFilter");
        }
        ServerHttpRequest request = exchange.getRequest();
        Map<String, String> path = exchange.getAttributeOrDefault(
                ServerWebExchangeUtils.URI_TEMPLATE_VARIABLES_ATTRIBUTE, Map.of());
        return limits.variables(limit, request, () -> peer(request), name -> request.getHeaders().getOrEmpty(name),
                path);
    }

    private static @Nullable String peer(ServerHttpRequest request) {
        InetSocketAddress remote = request.getRemoteAddress();
        return remote == null ? null
                : remote.getAddress() != null ? remote.getAddress().getHostAddress() : remote.getHostString();
    }

    /**
     * Answers a request refused with another status than the route's (503, 400): the status and
     * headers are committed here, so that the filter's 429 no longer applies.
     */
    private static Mono<Response> answer(@Nullable ServerWebExchange exchange, ResponseEntity<?> answer) {
        if (exchange == null) {
            return Mono.just(new Response(false, answer.getHeaders().toSingleValueMap()));
        }
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(answer.getStatusCode());
        response.getHeaders().setAll(answer.getHeaders().toSingleValueMap());
        return response.setComplete().thenReturn(REFUSED);
    }
}
