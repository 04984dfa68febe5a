package dev.sluice.sample;

import java.util.Map;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;

/**
 * Calls the partner, which allows 5 calls in any second. Nothing here limits the calls: the
 * client rule {@code partner} of {@code application.yml} does, on the {@code RestClient.Builder}
 * Spring Boot provides. Each call waits for its permit, and the partner's answers adjust the
 * limit: a {@code Retry-After} pauses the calls until then, a lower quota lowers the limit.
 *
 * <p>The partner is {@code sample.partner.url}: this instance's own by default, another
 * instance's when several share one partner.
 */
@Component
public class PartnerClient {

    private final RestClient http;
    private final Environment environment;

    PartnerClient(RestClient.Builder http, Environment environment) {
        this.http = http.build();
        this.environment = environment;
    }

    /**
     * Asks the partner for a quote, waiting up to 10 seconds for a permit. A 429 is tried again
     * once: its {@code Retry-After} paused the rule's calls, so the second call waits for it.
     *
     * @param symbol what to quote
     * @return the partner's answer
     * @throws HttpClientErrorException.TooManyRequests when the partner refuses the second call too
     */
    public Map<String, Object> quote(String symbol) {
        try {
            return fetch(symbol);
        } catch (HttpClientErrorException.TooManyRequests refused) {
            return fetch(symbol);
        }
    }

    private Map<String, Object> fetch(String symbol) {
        return http.get()
                .uri(environment.getRequiredProperty("sample.partner.url") + "/partner/quote?symbol={symbol}", symbol)
                .retrieve()
                .body(new ParameterizedTypeReference<>() { });
    }
}
