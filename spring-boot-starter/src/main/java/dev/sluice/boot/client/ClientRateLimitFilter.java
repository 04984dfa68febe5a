package dev.sluice.boot.client;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * Applies {@code sluice.client.rules} to a {@code WebClient}: a request takes its permits when
 * it is about to be exchanged, waiting on timers where its rule says to wait, never blocking a
 * thread, and the partner's answer is read once its status and headers are in (see
 * {@link ClientRateLimitRules}). Added after the client's other filters, closest to the exchange.
 */
final class ClientRateLimitFilter implements ExchangeFilterFunction {

    private final ClientRateLimitRules rules;

    ClientRateLimitFilter(ClientRateLimitRules rules) {
        this.rules = rules;
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        List<ClientRateLimitRules.Rule> matched = rules.matching(request.method().name(), request.url());
        if (matched.isEmpty()) {
            return next.exchange(request);
        }
        // Cancelling the exchange while it waits for a permit takes it out of line.
        return Mono.fromFuture(() -> rules.admitAsync(matched, request.url(), request), false)
                .flatMap(permits -> {
                    // Each request's permits are counted again once: by its answer, failure or cancellation.
                    AtomicBoolean settled = new AtomicBoolean();
                    return next.exchange(request)
                            // The subscriber's next request must find what this answer changed in the store.
                            .flatMap(response -> settled.compareAndSet(false, true)
                                    ? Mono.fromCompletionStage(rules.answered(permits, response.statusCode().value(),
                                            response.headers().asHttpHeaders())).thenReturn(response)
                                    : Mono.just(response))
                            .doFinally(signal -> {
                                if (settled.compareAndSet(false, true)) {
                                    rules.unanswered(permits);
                                }
                            });
                });
    }
}
