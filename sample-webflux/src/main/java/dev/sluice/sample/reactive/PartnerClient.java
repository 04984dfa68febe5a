package dev.sluice.sample.reactive;

import java.util.Map;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;

/**
 * Calls the partner, which allows 5 calls in any second, with {@code WebClient}. Nothing here
 * limits the calls: the client rule {@code partner} of {@code application.yml} does, on the
 * {@code WebClient.Builder} Spring Boot provides. Each request waits for its permit on a timer
 * rather than a sleeping thread, so a batch of calls ties up no event loop while it is throttled,
 * and the partner's answers adjust the limit: a {@code Retry-After} pauses the calls until then,
 * a lower quota lowers the limit.
 *
 * <p>The partner is {@code sample.partner.url}: this instance's own by default.
 */
@Component
public class PartnerClient {

    private final WebClient http;
    private final Environment environment;

    PartnerClient(WebClient.Builder http, Environment environment) {
        this.http = http.build();
        this.environment = environment;
    }

    /**
     * Asks the partner for a quote when subscribed, once a permit is free (up to 10 seconds). A
     * 429 is tried again once: its {@code Retry-After} paused the rule's calls, so the second call
     * waits for it.
     *
     * @param symbol what to quote
     * @return the partner's answer; {@link WebClientResponseException.TooManyRequests} when the
     *         partner refuses the second call too
     */
    public Mono<Map<String, Object>> quote(String symbol) {
        return fetch(symbol).onErrorResume(WebClientResponseException.TooManyRequests.class, refused -> fetch(symbol));
    }

    private Mono<Map<String, Object>> fetch(String symbol) {
        return http.get()
                .uri(environment.getRequiredProperty("sample.partner.url") + "/partner/quote?symbol={symbol}", symbol)
                .retrieve()
                .bodyToMono(new ParameterizedTypeReference<>() { });
    }
}
