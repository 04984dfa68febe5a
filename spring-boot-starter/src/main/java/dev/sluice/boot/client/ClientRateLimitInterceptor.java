package dev.sluice.boot.client;

import java.io.IOException;
import java.util.List;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Applies {@code sluice.client.rules} to a {@code RestClient} or {@code RestTemplate}: a request
 * takes its permits just before it is sent, waiting on the calling thread where its rule says
 * to wait, and the partner's answer is read once it is in (see {@link ClientRateLimitRules}).
 * Added after the client's other interceptors, so that what they do before sending does not
 * count against the partner's window.
 */
final class ClientRateLimitInterceptor implements ClientHttpRequestInterceptor {

    private final ClientRateLimitRules rules;

    ClientRateLimitInterceptor(ClientRateLimitRules rules) {
        this.rules = rules;
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        List<ClientRateLimitRules.Rule> matched = rules.matching(request.getMethod().name(), request.getURI());
        if (matched.isEmpty()) {
            return execution.execute(request, body);
        }
        List<ClientRateLimitRules.Permit> permits = rules.admit(matched, request.getURI(), request);
        ClientHttpResponse response;
        try {
            response = execution.execute(request, body);
        } catch (IOException | RuntimeException e) {
            rules.unanswered(permits);
            throw e;
        }
        // The caller's next request must find what this answer changed in the store.
        rules.answered(permits, response.getStatusCode().value(), response.getHeaders()).join();
        return response;
    }
}
