package dev.sluice.sample.reactive;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import java.util.Map;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Calls the partner, which allows 5 calls per second, with {@code WebClient}. Each subscription to
 * a quote waits for a permit (up to 10 seconds) before the request leaves, on a timer rather than
 * a sleeping thread, so a batch of calls ties up no event loop while it is throttled.
 *
 * <p>The sliding log is exact over any second; the window's extra 100 ms absorbs the difference
 * in travel time between calls.
 */
@Component
public class PartnerClient {

    private static final String QUOTE_URL = "http://localhost:{port}/partner/quote?symbol={symbol}";

    private final WebClient http;
    private final Environment environment;

    PartnerClient(WebClient.Builder http, Environment environment) {
        this.http = http.build();
        this.environment = environment;
    }

    /**
     * Asks the partner for a quote when subscribed, once a permit is free.
     *
     * @param symbol what to quote
     * @return the partner's answer
     */
    @RateLimited(name = "partner", limit = PartnerSimulator.CALLS_PER_SECOND, window = "1100ms",
            algorithm = Algorithm.SLIDING_LOG, onLimit = OnLimit.WAIT, maxWait = "10s")
    public Mono<Map<String, Object>> quote(String symbol) {
        return http.get().uri(QUOTE_URL, environment.getProperty("local.server.port"), symbol).retrieve()
                .bodyToMono(new ParameterizedTypeReference<>() { });
    }
}
