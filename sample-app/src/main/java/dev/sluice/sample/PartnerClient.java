package dev.sluice.sample;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * Calls the partner, which allows 5 calls per second. The limit waits for a permit rather than
 * fail: callers are slowed down, and the partner never sees more than 5 calls in a second.
 *
 * <p>A permit is counted here, before the request travels; the partner counts the request when
 * it arrives. The sliding log is exact over any second, and the window's extra 100 ms absorbs
 * the difference in travel time between calls. The first request of a cold HTTP client travels
 * far longer (about 100 to 170 ms measured on a fresh JVM), so the client connects at start-up.
 */
@Component
public class PartnerClient {

    private static final Logger log = LoggerFactory.getLogger(PartnerClient.class);
    private static final String QUOTE_URL = "http://localhost:{port}/partner/quote?symbol={symbol}";

    private final RestClient http = RestClient.create();
    private final Environment environment;

    PartnerClient(Environment environment) {
        this.environment = environment;
    }

    /**
     * Asks the partner for a quote, waiting up to 10 seconds for a permit.
     *
     * @param symbol what to quote
     * @return the partner's answer
     */
    @RateLimited(name = "partner", limit = PartnerSimulator.CALLS_PER_SECOND, window = "1100ms",
            algorithm = Algorithm.SLIDING_LOG, onLimit = OnLimit.WAIT, maxWait = "10s")
    public Map<String, Object> quote(String symbol) {
        return http.get()
                .uri(QUOTE_URL, port(), symbol)
                .retrieve()
                .body(new ParameterizedTypeReference<>() { });
    }

    /**
     * Opens the connection to the partner, and loads the HTTP client, with an {@code OPTIONS}
     * request, which the partner answers without counting it as a call.
     */
    @EventListener(ApplicationReadyEvent.class)
    void connect() {
        try {
            http.options().uri(QUOTE_URL, port(), "").retrieve().toBodilessEntity();
        } catch (RestClientException e) {
            log.warn("Could not connect to the partner ahead of the first quote: {}", e.getMessage());
        }
    }

    private String port() {
        return environment.getProperty("local.server.port");
    }
}
