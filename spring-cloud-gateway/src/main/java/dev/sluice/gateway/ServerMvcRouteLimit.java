package dev.sluice.gateway;

import dev.sluice.Decision;
import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.web.servlet.RateLimitExceptionHandler;
import dev.sluice.boot.web.servlet.RateLimitResponseHeaders;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Collections;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.context.ApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The filter {@link SluiceFilterFunctions#rateLimit} makes: one route's limit on the Server MVC
 * gateway. Bound to its application when the application starts, or on its first request when it
 * was made later; it then decides each request before the route's handler runs.
 */
final class ServerMvcRouteLimit implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    private final SluiceFilterFunctions.RateLimitConfig config;
    private final Thread madeBy;
    private volatile @Nullable Bound bound;

    /** The filter as bound to its application. */
    private record Bound(RouteLimits limits, RouteLimits.@Nullable RouteLimit limit, RateLimitResponseHeaders headers,
                         RateLimitExceptionHandler answers) {
    }

    ServerMvcRouteLimit(SluiceFilterFunctions.RateLimitConfig config, Thread madeBy) {
        this.config = config;
        this.madeBy = madeBy;
    }

    Thread madeBy() {
        return madeBy;
    }

    /**
     * Checks the options and registers the limiter in an application.
     *
     * @throws SluiceConfigurationException when the options are invalid
     */
    void bind(ApplicationContext context) {
        RouteLimits limits = context.getBean(RouteLimits.class);
        String name = config.getLimiter() != null ? config.getLimiter() : config.getName();
        if (!config.getTiers().isEmpty() && (config.getName() == null || config.getName().isBlank())) {
            throw new SluiceConfigurationException("A Sluice RateLimit filter with tiers of its own"
                    + " has no name", "Name its limiter: RateLimitConfig.name(\"api\"), or the argument name.", null);
        }
        if (config.getKeyFunction() != null && !config.getKey().isBlank()) {
            throw new SluiceConfigurationException("The Sluice RateLimit filter of limiter '" + name
                    + "' has both a key function and a key expression", "Keep one of them.", null);
        }
        String limiterId = config.getName() != null ? config.getName() : String.valueOf(name);
        bound = new Bound(limits, limits.limit("RateLimit filter '" + name + "'", limiterId, config),
                context.getBean(RateLimitResponseHeaders.class), context.getBean(RateLimitExceptionHandler.class));
    }

    @Override
    public ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next) throws Exception {
        Bound filter = bound;
        if (filter == null) {
            synchronized (this) {
                if (bound == null) {
                    bind(MvcUtils.getApplicationContext(request));
                }
            }
            filter = bound;
        }
        RouteLimits.RouteLimit limit = filter.limit();
        if (limit == null) {
            return next.handle(request);
        }
        HttpServletRequest servletRequest = request.servletRequest();
        HttpServletResponse servletResponse = RequestContextHolder.getRequestAttributes()
                instanceof ServletRequestAttributes attributes ? attributes.getResponse() : null;
        String key;
        String plan;
        try {
            Map<String, @Nullable Object> variables = filter.limits().variables(limit, request,
                    servletRequest::getRemoteAddr, name -> Collections.list(servletRequest.getHeaders(name)),
                    request.pathVariables());
            key = filter.limits().key(limit, variables, functionKey(limit, request));
            plan = filter.limits().plan(limit, variables);
        } catch (RateLimitKeyException error) {
            try {
                key = filter.limits().afterKeyError(limit, error);
            } catch (RateLimitKeyException rejected) {
                return answer(filter.answers().badRequest(rejected));
            }
            if (key == null) {
                return next.handle(request);
            }
            plan = null;
        }
        Decision decision;
        try {
            decision = limit.limiter().acquire(key, 1, plan);
        } catch (RateLimitExceededException rejection) {
            if (servletResponse == null) {
                throw rejection;
            }
            return answer(filter.answers().tooManyRequests(rejection, servletRequest, servletResponse));
        } catch (StoreUnavailableException unavailable) {
            return answer(filter.answers().serviceUnavailable(unavailable));
        }
        if (servletResponse != null) {
            filter.headers().writeDecision(servletRequest, servletResponse, limit.name(), decision);
        }
        Runnable held = filter.limits().held(limit, key, plan);
        if (held == null) {
            return next.handle(request);
        }
        try {
            return next.handle(request);
        } finally {
            held.run();
        }
    }

    /** The key function's key, or the empty string for a route without one (whose expression gives the key). */
    private String functionKey(RouteLimits.RouteLimit limit, ServerRequest request) {
        Function<ServerRequest, @Nullable String> function = config.getKeyFunction();
        if (function == null) {
            return "";
        }
        String key;
        try {
            key = function.apply(request);
        } catch (RuntimeException e) {
            throw new RateLimitKeyException(limit.name(), "Rate limit '" + limit.name() + "' cannot count this"
                    + " request: its key function failed: " + e.getMessage(), e);
        }
        if (key == null || key.isBlank()) {
            throw new RateLimitKeyException(limit.name(), "Rate limit '" + limit.name() + "' cannot count this"
                    + " request: its key function gave " + (key == null ? "null" : "a blank key"), null);
        }
        return key;
    }

    private static ServerResponse answer(ResponseEntity<?> answer) {
        ServerResponse.BodyBuilder response = ServerResponse.status(answer.getStatusCode())
                .headers(headers -> headers.addAll(answer.getHeaders()));
        return answer.getBody() == null ? response.build() : response.body(answer.getBody());
    }
}
