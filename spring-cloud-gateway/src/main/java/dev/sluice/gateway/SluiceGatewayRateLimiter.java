package dev.sluice.gateway;

import dev.sluice.Decision;
import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.web.reactive.ReactiveRateLimitExceptionHandler;
import dev.sluice.boot.web.reactive.ReactiveRateLimitHeaders;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.ResolvableType;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.HttpMessageWriter;
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
 *       sluice-rate-limiter:
 *         key: "#ip"
 *         tiers:
 *           - { limit: 3, window: 1m }
 * </pre>
 *
 * <p>Each route's options ({@link Config}, under {@value #CONFIGURATION_PROPERTY_NAME}) are bound
 * as Spring Cloud Gateway binds those of its own limiters, through its {@link ConfigurationService}
 * when the route is built, or given in the Java DSL:
 * {@code filters.requestRateLimiter().rateLimiter(SluiceGatewayRateLimiter.class, sluice -> sluice.limiter("partner"))}.
 * The routes of {@code spring.cloud.gateway.server.webflux.routes} and of the Java DSL are checked
 * when the application starts, so that a mistake fails start-up naming the route. A route names a
 * limiter of {@code sluice.limits} or has tiers of its own, and its limiter is registered as any
 * other: metrics, the actuator endpoint and {@code sluice.failure-policy} apply to it.
 *
 * <p>On the routes it limits, Sluice puts a filter of its own in place of the gateway's
 * ({@link SluiceRequestRateLimiterGatewayFilterFactory}). Requests are decided without blocking
 * ({@code RateLimiter.acquireAsync}). The key is what the route's key expression gives, or else
 * what its {@code KeyResolver} gives; a request without one follows {@code sluice.key-error}. The
 * rate-limit headers of the decision ({@code RateLimit-Policy}, {@code RateLimit},
 * {@code X-RateLimit-*}) are written on the response, merged with those of any other Sluice limit
 * of the request; a refused request is answered as Sluice answers it everywhere, with the RFC 9457
 * problem of {@link ReactiveRateLimitExceptionHandler}: {@code 429} with {@code Retry-After},
 * {@code 503} when it cannot be checked under {@code FAIL_CLOSED}, {@code 400} when its key or
 * plan cannot be worked out under {@code sluice.key-error=reject}.
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
    /** The application's codecs, which write Sluice's problems as they write a handler's. */
    private final List<HttpMessageWriter<?>> writers;
    /** The limits of the routes built so far, by route id; none for a route whose limit is disabled. */
    private final Map<String, RouteLimits.RouteLimit> routes = new ConcurrentHashMap<>();
    private final Set<String> disabled = ConcurrentHashMap.newKeySet();

    /**
     * A route's Sluice options, bound from its {@code sluice-rate-limiter.*} arguments or set in the
     * Java DSL.
     */
    public static class Config extends RouteLimitOptions<Config> {
    }

    SluiceGatewayRateLimiter(ConfigurationService configurationService, RouteLimits limits,
                             ReactiveRateLimitHeaders headers, ReactiveRateLimitExceptionHandler answers,
                             List<HttpMessageWriter<?>> writers) {
        super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
        this.limits = limits;
        this.headers = headers;
        this.answers = answers;
        this.writers = writers;
    }

    /**
     * Binds a route's options, when they are among the filter's arguments, and registers its
     * limiter.
     *
     * @param event a route's filter arguments
     * @throws SluiceConfigurationException when the route's options are invalid
     */
    @Override
    public void onApplicationEvent(FilterArgsEvent event) {
        if (event.getArgs().keySet().stream().noneMatch(key -> key.startsWith(CONFIGURATION_PROPERTY_NAME + "."))) {
            return;
        }
        super.onApplicationEvent(event);
        register(event.getRouteId(), getConfig().get(event.getRouteId()));
    }

    private RouteLimits.@Nullable RouteLimit register(String routeId, Config options) {
        RouteLimits.RouteLimit limit = limits.limit("route '" + routeId + "' " + CONFIGURATION_PROPERTY_NAME, routeId,
                options);
        if (limit == null) {
            routes.remove(routeId);
            disabled.add(routeId);
        } else {
            routes.put(routeId, limit);
            disabled.remove(routeId);
        }
        return limit;
    }

    /**
     * A route's limit, registered from the options the Java DSL gave when no filter arguments did.
     *
     * @return the limit, or {@code null} when {@code sluice.limits.<name>.enabled} is false
     * @throws SluiceConfigurationException when the route has no options, or invalid ones
     */
    RouteLimits.@Nullable RouteLimit route(String routeId) {
        RouteLimits.RouteLimit limit = routes.get(routeId);
        if (limit != null || disabled.contains(routeId)) {
            return limit;
        }
        synchronized (this) {
            limit = routes.get(routeId);
            if (limit != null || disabled.contains(routeId)) {
                return limit;
            }
            Config options = getConfig().get(routeId);
            if (options == null) {
                throw new SluiceConfigurationException("Route '" + routeId + "' is limited by sluiceRateLimiter but"
                        + " has no " + CONFIGURATION_PROPERTY_NAME + " options", "Name a limiter of sluice.limits or"
                        + " give the route tiers of its own: in properties, " + CONFIGURATION_PROPERTY_NAME
                        + ".limiter or " + CONFIGURATION_PROPERTY_NAME + ".tiers among the filter's args; in the Java"
                        + " DSL, filters.requestRateLimiter().rateLimiter(SluiceGatewayRateLimiter.class, sluice ->"
                        + " sluice.limiter(\"name\")).configure(...).", null);
            }
            return register(routeId, options);
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
        disabled.retainAll(routeIds);
    }

    /**
     * Limits one request of a route, as the route's filter: decides it, then lets it go on or
     * answers it.
     *
     * @param routeId     the route
     * @param keyResolver the route's {@code KeyResolver}, asked for the key when the route has no
     *                    key expression
     */
    Mono<Void> filter(String routeId, KeyResolver keyResolver, ServerWebExchange exchange, GatewayFilterChain chain) {
        return Mono.defer(() -> {
            RouteLimits.RouteLimit limit = route(routeId);
            if (limit == null) {
                return chain.filter(exchange);
            }
            Mono<String> gatewayKey = limit.key() != null ? Mono.just("")
                    : keyResolver.resolve(exchange).defaultIfEmpty("");
            // Whatever ends the request, cancelled by a client that went away too, releases the permit it holds.
            Held held = new Held();
            return gatewayKey.flatMap(key -> decide(limit, key, exchange, held))
                    .flatMap(admitted -> admitted ? chain.filter(exchange) : Mono.empty())
                    .doFinally(signal -> held.end());
        });
    }

    /**
     * Decides one request of a route, without blocking, as the route's filter does. The request's
     * exchange is read from the Reactor Context, where Sluice's {@link ServerWebExchangeContextFilter}
     * puts it.
     *
     * @param routeId the route
     * @param id      the key the route's {@code KeyResolver} gave, used when the route has no key
     *                expression
     * @return whether the request may go on; a refused one has been answered by the time it completes
     */
    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        return Mono.deferContextual(context -> {
            ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
            if (exchange == null) {
                return Mono.error(new IllegalStateException("sluiceRateLimiter decides requests of route '" + routeId
                        + "' from their exchange, which is not in the Reactor Context; register a"
                        + " ServerWebExchangeContextFilter"));
            }
            RouteLimits.RouteLimit limit = route(routeId);
            if (limit != null && limit.limiter().holdsPermits()) {
                return Mono.error(new IllegalStateException("Route '" + routeId + "' limits the requests running at"
                        + " once, whose permits only its RequestRateLimiter filter releases when they end; it was"
                        + " asked without it"));
            }
            return limit == null ? Mono.just(ADMITTED)
                    : decide(limit, id, exchange, new Held()).map(admitted -> admitted ? ADMITTED : REFUSED);
        });
    }

    /**
     * Decides one request: admitted, it carries the rate-limit headers; refused, it is answered.
     *
     * @param gatewayKey the key the route's {@code KeyResolver} gave; blank for none
     * @return whether the request may go on
     */
    private Mono<Boolean> decide(RouteLimits.RouteLimit limit, String gatewayKey, ServerWebExchange exchange,
                                 Held held) {
        String key;
        String plan;
        try {
            if (limit.key() == null && gatewayKey.isBlank()) {
                throw new RateLimitKeyException(limit.name(), "Rate limit '" + limit.name() + "' cannot count this"
                        + " request: the route's KeyResolver gave no key", null);
            }
            Map<String, @Nullable Object> variables = variables(limit, exchange);
            key = limits.key(limit, variables, gatewayKey);
            plan = limits.plan(limit, variables);
        } catch (RateLimitKeyException error) {
            try {
                key = limits.afterKeyError(limit, error);
            } catch (RateLimitKeyException rejected) {
                return answer(exchange, answers.badRequest(rejected));
            }
            if (key == null) {
                return Mono.just(true);
            }
            plan = null;
        }
        String counted = key;
        String planned = plan;
        CompletableFuture<Decision> acquiring = limit.limiter().acquireAsync(key, 1, plan).toCompletableFuture();
        return Mono.fromFuture(acquiring, true)
                .map(decision -> {
                    held.set(limits.held(limit, counted, planned));
                    headers.writeDecision(exchange, limit.name(), decision);
                    return true;
                })
                .doOnCancel(() -> {
                    // Out of the line it waits in; a permit it was given as the client went away goes back.
                    if (!acquiring.cancel(false)) {
                        acquiring.thenAccept(decision -> held.setIfNone(limits.held(limit, counted, planned)));
                    }
                })
                .onErrorMap(CompletionException.class, failure -> failure.getCause() != null ? failure.getCause()
                        : failure)
                .onErrorResume(RateLimitExceededException.class,
                        rejection -> answer(exchange, answers.tooManyRequests(rejection, exchange)))
                .onErrorResume(StoreUnavailableException.class,
                        unavailable -> answer(exchange, answers.serviceUnavailable(unavailable)));
    }

    /** The release of the permit one request holds, if its route's limiter holds permits, run once it ends. */
    private static final class Held {

        private final AtomicReference<@Nullable Runnable> release = new AtomicReference<>();
        private volatile boolean ended;

        void set(@Nullable Runnable release) {
            this.release.set(release);
            if (ended) {
                end();
            }
        }

        /** A permit given after the request was cancelled, unless the request holds one already. */
        void setIfNone(@Nullable Runnable late) {
            if (late != null && release.compareAndSet(null, late) && ended) {
                end();
            }
        }

        void end() {
            ended = true;
            Runnable held = release.getAndSet(null);
            if (held != null) {
                held.run();
            }
        }
    }

    /** {@code #ip}, {@code #request} and {@code #path} of the exchange; none for a route without expressions. */
    private Map<String, @Nullable Object> variables(RouteLimits.RouteLimit limit, ServerWebExchange exchange) {
        if (limit.key() == null && limit.plan() == null) {
            return Map.of();
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
     * Answers a refused request with Sluice's problem, written by the application's codecs as a
     * handler's {@code ResponseEntity} is.
     *
     * @return {@code false}: the request goes no further
     */
    @SuppressWarnings("unchecked")
    private Mono<Boolean> answer(ServerWebExchange exchange, ResponseEntity<ProblemDetail> answer) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(answer.getStatusCode());
        response.getHeaders().setAll(answer.getHeaders().toSingleValueMap());
        ProblemDetail problem = answer.getBody();
        MediaType type = answer.getHeaders().getContentType();
        ResolvableType problemType = ResolvableType.forClass(ProblemDetail.class);
        for (HttpMessageWriter<?> writer : writers) {
            if (problem != null && writer.canWrite(problemType, type)) {
                return ((HttpMessageWriter<ProblemDetail>) writer)
                        .write(Mono.just(problem), problemType, type, response, Map.of())
                        .thenReturn(false);
            }
        }
        return response.setComplete().thenReturn(false);
    }
}
