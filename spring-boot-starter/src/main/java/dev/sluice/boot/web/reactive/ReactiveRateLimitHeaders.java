package dev.sluice.boot.web.reactive;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.annotation.OnLimit;
import dev.sluice.aop.CallScopedListener;
import dev.sluice.aop.internal.SubscriberContext;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.RateLimitPolicies;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Puts rate-limit headers on the WebFlux response of the request a limited call was made for.
 * A reactive method's call is decided per subscription, with the exchange in the subscriber's
 * Reactor Context (put there by {@link ServerWebExchangeContextFilter}); the decisions are
 * recorded in the exchange, and the headers are written just before the response commits, so
 * that they are there whichever thread completed a decision. The fields are those
 * {@link RateLimitPolicies} makes, as for Spring MVC; limiters that wait stay out, unless they
 * reject.
 *
 * <p>Public for limits decided outside Sluice's own filters and methods, such as those of
 * {@code sluice-spring-cloud-gateway}, whose responses carry the same fields; the starter
 * registers one as the bean {@code sluiceReactiveRateLimitHeaders}.
 */
public final class ReactiveRateLimitHeaders implements CallScopedListener {

    private static final String POLICIES = ReactiveRateLimitHeaders.class.getName() + ".policies";

    private final SluiceProperties.Headers headers;

    ReactiveRateLimitHeaders(SluiceProperties.Headers headers) {
        this.headers = headers;
    }

    /**
     * The exchange of the subscription being decided, if it is part of a WebFlux request.
     *
     * @return the exchange, or {@code null} outside a reactive call made for a request
     */
    static @Nullable ServerWebExchange currentExchange() {
        ContextView context = SubscriberContext.current();
        return context == null ? null : ServerWebExchangeContextFilter.getExchange(context).orElse(null);
    }

    /**
     * Listens to the decisions of the subscription being decided, if it is made for a request.
     * Limiters that wait stay out: they usually guard outbound calls, whose quota is not the
     * client's business.
     */
    @Override
    public @Nullable RateLimitListener forThisCall() {
        ServerWebExchange exchange = currentExchange();
        if (exchange == null) {
            return null;
        }
        RateLimitPolicies policies = policies(exchange);
        return new RateLimitListener() {
            @Override
            public void onDecision(RateLimiter limiter, String key, Decision decision) {
                if (limiter.onLimit() == OnLimit.REJECT) {
                    policies.record(limiter.name(), decision);
                }
            }
        };
    }

    /**
     * Records a decision made outside a limited call (an HTTP rule's), as the call's listener
     * does for a limiter that rejects.
     *
     * @param exchange    the request's exchange
     * @param limiterName the deciding limiter
     * @param decision    its decision
     */
    public void writeDecision(ServerWebExchange exchange, String limiterName, Decision decision) {
        policies(exchange).record(limiterName, decision);
    }

    /**
     * Records a rejection, which the call's listener may not have heard (a limiter that waits,
     * or one called outside the aspect), and sets {@code Retry-After}; the other headers follow
     * when the response commits.
     *
     * @param exchange    the request's exchange
     * @param limiterName the rejecting limiter
     * @param decision    its decision
     */
    public void writeRejection(ServerWebExchange exchange, String limiterName, Decision decision) {
        long retryAfter = policies(exchange).reject(limiterName, decision);
        ServerHttpResponse response = exchange.getResponse();
        if (!response.isCommitted()) {
            response.getHeaders().set(HttpHeaders.RETRY_AFTER, String.valueOf(retryAfter));
        }
    }

    /**
     * The exchange's policies; made once per exchange, with the action writing their headers
     * as the response commits.
     */
    private RateLimitPolicies policies(ServerWebExchange exchange) {
        return (RateLimitPolicies) exchange.getAttributes().computeIfAbsent(POLICIES, name -> {
            RateLimitPolicies policies = new RateLimitPolicies();
            if (headers != SluiceProperties.Headers.NONE) {
                ServerHttpResponse response = exchange.getResponse();
                response.beforeCommit(() -> Mono.fromRunnable(() -> policies.fields(headers)
                        .forEach(response.getHeaders()::set)));
            }
            return policies;
        });
    }
}
