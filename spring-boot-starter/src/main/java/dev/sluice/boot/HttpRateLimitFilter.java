package dev.sluice.boot;

import dev.sluice.Decision;
import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerExceptionResolver;

/**
 * Decides the requests {@code sluice.http.rules} match before any handler runs and before the
 * request body is read. An admitted request goes on with the rate-limit headers of each
 * matching rule; a rejected one is answered here, by the application's exception handling (the
 * starter's {@link RateLimitExceptionHandler} unless the application answers first), so that
 * its 429, 503 or 400 is the one an annotated method would get.
 */
final class HttpRateLimitFilter extends OncePerRequestFilter {

    private final HttpRateLimitRules rules;
    private final ClientIpResolver clientIp;
    private final RateLimitResponseHeaders headers;
    private final ObjectProvider<HandlerExceptionResolver> exceptionResolver;

    HttpRateLimitFilter(HttpRateLimitRules rules, ClientIpResolver clientIp, RateLimitResponseHeaders headers,
                        ObjectProvider<HandlerExceptionResolver> exceptionResolver) {
        this.rules = rules;
        this.clientIp = clientIp;
        this.headers = headers;
        this.exceptionResolver = exceptionResolver;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        PathContainer path = RequestPath.parse(request.getRequestURI(), request.getContextPath())
                .pathWithinApplication();
        List<HttpRateLimitRules.Rule> matched = rules.matching(request.getMethod(), path);
        for (HttpRateLimitRules.Rule rule : matched) {
            try {
                HttpRateLimitRules.Call call = rules.call(rule, path,
                        () -> SluiceWebMvcAutoConfiguration.clientIp(clientIp, request), request);
                if (call != null) {
                    Decision decision = rule.limiter().acquire(call.key(), 1, call.plan());
                    headers.writeDecision(request, response, rule.name(), decision);
                }
            } catch (RateLimitExceededException | StoreUnavailableException | RateLimitKeyException refused) {
                answer(request, response, refused);
                return;
            }
        }
        chain.doFilter(request, response);
    }

    /** Answers a refused request as the application's exception handling would; rethrows if nothing handles it. */
    private void answer(HttpServletRequest request, HttpServletResponse response, RuntimeException refused) {
        HandlerExceptionResolver resolver = exceptionResolver.getIfAvailable();
        if (resolver == null || resolver.resolveException(request, response, null, refused) == null) {
            throw refused;
        }
    }
}
