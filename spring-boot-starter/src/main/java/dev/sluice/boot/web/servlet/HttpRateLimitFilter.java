package dev.sluice.boot.web.servlet;

import dev.sluice.Decision;
import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.web.ClientIpResolver;
import dev.sluice.boot.web.HttpRateLimitRules;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.server.PathContainer;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Decides the requests {@code sluice.http.rules} match before any handler runs and before the
 * request body is read. An admitted request goes on with the rate-limit headers of each
 * matching rule; a rejected one is answered here, by the application's exception handling (the
 * starter's {@link RateLimitExceptionHandler} unless the application answers first), so that
 * its 429, 503 or 400 is the one an annotated method would get.
 *
 * <p>Under rules that count requests by their outcome ({@code count-on}), the permits a request
 * took are given back once its status is known, unless the rule counts that status: when the
 * rest of the chain returns, or, for a request that went asynchronous, when it completes. An
 * exception escaping the chain counts as a 500 unless the response was already committed, with
 * the status the client then got.
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
        // The path Spring MVC matches handlers against: within the context path, and within the servlet path of
        // a DispatcherServlet mapped to a prefix (spring.mvc.servlet.path).
        PathContainer path = ServletRequestPathUtils.parseAndCache(request).pathWithinApplication();
        List<HttpRateLimitRules.Rule> matched = rules.matching(request.getMethod(), path);
        List<HttpRateLimitRules.Taken> taken = null;
        for (HttpRateLimitRules.Rule rule : matched) {
            try {
                HttpRateLimitRules.Call call = rules.call(rule, path,
                        () -> SluiceWebMvcAutoConfiguration.clientIp(clientIp, request), request);
                if (call != null) {
                    Decision decision = rule.limiter().acquire(call.key(), 1, call.plan());
                    HttpRateLimitRules.Taken permit = rules.taken(rule, call);
                    if (permit != null) {
                        taken = taken == null ? new ArrayList<>(2) : taken;
                        taken.add(permit);
                    }
                    headers.writeDecision(request, response, rule.name(), decision);
                }
            } catch (RateLimitExceededException | StoreUnavailableException | RateLimitKeyException refused) {
                // The permits earlier rules took are counted by this answer's status, as any other.
                try {
                    answer(request, response, refused);
                } catch (RuntimeException unanswered) {
                    end(taken, statusAfterFailure(response));
                    throw unanswered;
                }
                end(taken, response.getStatus());
                return;
            }
        }
        if (taken == null) {
            chain.doFilter(request, response);
            return;
        }
        try {
            chain.doFilter(request, response);
        } catch (Throwable failure) {
            end(taken, statusAfterFailure(response));
            throw failure;
        }
        if (request.isAsyncStarted()) {
            request.getAsyncContext().addListener(new EndWhenComplete(taken, response));
        } else {
            end(taken, response.getStatus());
        }
    }

    /** Ends a request: gives back what its status does not count, and releases what it held. */
    private void end(@Nullable List<HttpRateLimitRules.Taken> taken, int status) {
        if (taken != null) {
            rules.end(taken, status);
        }
    }

    /**
     * The status of a request whose handling failed: what the client got if the response was
     * committed before the failure, otherwise the server error it gets now.
     */
    private static int statusAfterFailure(HttpServletResponse response) {
        return response.isCommitted() ? response.getStatus() : HttpServletResponse.SC_INTERNAL_SERVER_ERROR;
    }

    /** Answers a refused request as the application's exception handling would; rethrows if nothing handles it. */
    private void answer(HttpServletRequest request, HttpServletResponse response, RuntimeException refused) {
        HandlerExceptionResolver resolver = exceptionResolver.getIfAvailable();
        if (resolver == null || resolver.resolveException(request, response, null, refused) == null) {
            throw refused;
        }
    }

    /**
     * Ends an asynchronous request once it completes: gives back its permits by the status it
     * was answered with, and releases those it held; whatever went wrong before (a timeout, an error), the application or the
     * container has answered it by then.
     */
    private final class EndWhenComplete implements AsyncListener {

        private final List<HttpRateLimitRules.Taken> taken;
        private final HttpServletResponse response;

        EndWhenComplete(List<HttpRateLimitRules.Taken> taken, HttpServletResponse response) {
            this.taken = taken;
            this.response = response;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            end(taken, response.getStatus());
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            // Answered by the application (Spring MVC: 503) before the request completes.
        }

        @Override
        public void onError(AsyncEvent event) {
            // Answered by the application or the container (500) before the request completes.
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // Another asynchronous cycle of the same request: listeners must register again.
            event.getAsyncContext().addListener(this);
        }
    }
}
