package dev.sluice.sample;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import java.util.Map;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

/**
 * Calls the partner, which allows 5 calls per second. The limit waits for a permit rather than
 * fail: callers are slowed down, and the partner never sees more than 5 calls in a second. The
 * sliding log is exact over any second; the window's extra 100 ms absorbs the jitter between
 * deciding a call here and its arrival there.
 */
@Component
public class PartnerClient {

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
                .uri("http://localhost:{port}/partner/quote?symbol={symbol}",
                        environment.getProperty("local.server.port"), symbol)
                .retrieve()
                .body(new ParameterizedTypeReference<>() { });
    }
}
