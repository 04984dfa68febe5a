package dev.sluice.boot.web.reactive;

import dev.sluice.Decision;
import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.web.ClientIpResolver;
import dev.sluice.boot.web.HttpRateLimitRules;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.DispatchExceptionHandler;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Decides the WebFlux requests {@code sluice.http.rules} match before any handler runs and before
 * the request body is read, without blocking: each matching rule asks its limiter
 * asynchronously, in the order the rules are configured. An admitted request goes on with the
 * rate-limit headers of each matching rule; a refused one is answered here by the application's
 * exception handling, as the {@code DispatcherHandler} answers a handler's error (the starter's
 * {@link ReactiveRateLimitExceptionHandler} unless the application answers first), so that its
 * 429, 503 or 400 is the one an annotated method would get.
 *
 * <p>Under rules that count requests by their outcome ({@code count-on}), the permits a request
 * took are given back, without waiting for the store, when its response is committed, with the
 * status the client gets: that of the handler's answer, or of the application's answer to an
 * error that escaped the handler (a {@code ResponseStatusException}'s status, a 500 for others).
 * A response that is never committed (the client went away first) leaves them taken.
 */
final class ReactiveHttpRateLimitFilter implements WebFilter, Ordered {

    private final HttpRateLimitRules rules;
    private final ClientIpResolver clientIp;
    private final ReactiveRateLimitHeaders headers;
    private final ObjectProvider<HandlerAdapter> adapters;
    private final ObjectProvider<HandlerResultHandler> resultHandlers;
    /** What answers refusals, found once the context is ready: the first refusal looks it up. */
    private volatile @Nullable Answering answering;

    /** The exception handlers and result handlers of the application, in their order. */
    private record Answering(List<DispatchExceptionHandler> exceptionHandlers,
                             List<HandlerResultHandler> resultHandlers) {
    }

    ReactiveHttpRateLimitFilter(HttpRateLimitRules rules, ClientIpResolver clientIp, ReactiveRateLimitHeaders headers,
                                ObjectProvider<HandlerAdapter> adapters,
                                ObjectProvider<HandlerResultHandler> resultHandlers) {
        this.rules = rules;
        this.clientIp = clientIp;
        this.headers = headers;
        this.adapters = adapters;
        this.resultHandlers = resultHandlers;
    }

    @Override
    public int getOrder() {
        return SluiceWebFluxAutoConfiguration.HTTP_RULES_FILTER_ORDER;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (rules.rules().isEmpty()) {
            return chain.filter(exchange);
        }
        ServerHttpRequest request = exchange.getRequest();
        PathContainer path = request.getPath().pathWithinApplication();
        List<HttpRateLimitRules.Rule> matched = rules.matching(request.getMethod().name(), path);
        if (matched.isEmpty()) {
            return chain.filter(exchange);
        }
        Outcome outcome = new Outcome(exchange.getResponse());
        return Flux.fromIterable(matched)
                .concatMap(rule -> decide(exchange, request, path, rule, outcome))
                .then(Mono.just(true))
                .onErrorResume(ReactiveHttpRateLimitFilter::isRefusal, refused -> answer(exchange, refused)
                        .then(Mono.just(false)))
                .flatMap(admitted -> admitted ? chain.filter(exchange) : Mono.empty())
                // However it ends, cancelled by a client that went away too.
                .doFinally(signal -> outcome.ended());
    }

    /** One rule's decision: completes when it admits the request, fails with the refusal otherwise. */
    private Mono<Void> decide(ServerWebExchange exchange, ServerHttpRequest request, PathContainer path,
                              HttpRateLimitRules.Rule rule, Outcome outcome) {
        return Mono.defer(() -> {
            HttpRateLimitRules.Call call = rules.call(rule, path,
                    () -> SluiceWebFluxAutoConfiguration.clientIp(clientIp, request), request);
            if (call == null) {
                return Mono.empty();
            }
            CompletableFuture<Decision> acquiring = rule.limiter().acquireAsync(call.key(), 1, call.plan())
                    .toCompletableFuture();
            return Mono.fromFuture(acquiring, true)
                    .doOnNext(decision -> {
                        HttpRateLimitRules.Taken permit = rules.taken(rule, call);
                        if (permit != null) {
                            outcome.add(permit);
                        }
                        headers.writeDecision(exchange, rule.name(), decision);
                    })
                    .doOnCancel(() -> {
                        // Out of the line it waits in; a permit it was given as the client went away goes back.
                        if (!acquiring.cancel(false)) {
                            acquiring.thenAccept(decision -> outcome.admittedAfterCancel(rules.taken(rule, call)));
                        }
                    })
                    .then();
        }).onErrorMap(CompletionException.class, failure -> failure.getCause() != null ? failure.getCause() : failure);
    }

    /**
     * The permits one request took under rules that count requests by their outcome, given back
     * when its response is committed: the moment its status is settled, whoever answers (the
     * handler, this filter's refusal, or the application's handling of an error that escaped the
     * filter chain, which runs after it); and those it holds under rules with a concurrency tier,
     * released once the request ends.
     */
    private final class Outcome {

        private final ServerHttpResponse response;
        /** Added to while the rules decide, one after the other; read once the response commits. */
        private final List<HttpRateLimitRules.Taken> taken = new ArrayList<>();
        private final AtomicBoolean ended = new AtomicBoolean();

        Outcome(ServerHttpResponse response) {
            this.response = response;
        }

        void add(HttpRateLimitRules.Taken permit) {
            if (taken.isEmpty()) {
                response.beforeCommit(() -> {
                    HttpStatusCode status = response.getStatusCode();
                    // Started, not awaited: the response does not wait for the store.
                    rules.giveBack(taken, status == null ? 200 : status.value());
                    return Mono.empty();
                });
            }
            taken.add(permit);
        }

        /** Releases the permits held, once. */
        void ended() {
            if (ended.compareAndSet(false, true)) {
                rules.release(taken);
            }
        }

        /** Releases a permit given to a request after it was cancelled, unless it was counted in already. */
        void admittedAfterCancel(HttpRateLimitRules.@Nullable Taken permit) {
            if (permit != null && taken.stream().noneMatch(held -> held.rule() == permit.rule()
                    && held.call().equals(permit.call()))) {
                rules.release(List.of(permit));
            }
        }
    }

    private static boolean isRefusal(Throwable failure) {
        return failure instanceof RateLimitExceededException || failure instanceof StoreUnavailableException
                || failure instanceof RateLimitKeyException;
    }

    /**
     * Answers a refused request as the {@code DispatcherHandler} answers a handler's error: the
     * exception handlers of the handler adapters (those of {@code @ControllerAdvice} beans), then
     * the result handler of what they return. Fails with the refusal if nothing handles it.
     */
    private Mono<Void> answer(ServerWebExchange exchange, Throwable refused) {
        Answering answering = answering();
        Mono<HandlerResult> result = Mono.error(refused);
        for (DispatchExceptionHandler exceptionHandler : answering.exceptionHandlers) {
            result = result.onErrorResume(error -> exceptionHandler.handleError(exchange, error));
        }
        return result.flatMap(handled -> {
            for (HandlerResultHandler resultHandler : answering.resultHandlers) {
                if (resultHandler.supports(handled)) {
                    return resultHandler.handleResult(exchange, handled);
                }
            }
            return Mono.error(new IllegalStateException("No HandlerResultHandler for " + handled.getReturnValue()));
        });
    }

    private Answering answering() {
        Answering found = answering;
        if (found == null) {
            List<DispatchExceptionHandler> exceptionHandlers = adapters.orderedStream()
                    .filter(DispatchExceptionHandler.class::isInstance)
                    .map(DispatchExceptionHandler.class::cast)
                    .toList();
            found = new Answering(exceptionHandlers, resultHandlers.orderedStream().toList());
            answering = found;
        }
        return found;
    }
}
