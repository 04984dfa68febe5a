package dev.sluice.boot.web.servlet;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.annotation.OnLimit;
import dev.sluice.aop.CallScopedListener;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.RateLimitPolicies;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Puts rate-limit headers on the servlet response of the request a limited call was made for:
 * after each decision of the call, on whatever thread it completes (the request is captured on
 * the thread making the call), and again when a rejection becomes a 429. The fields are those
 * {@link RateLimitPolicies} makes; limiters that wait stay out, unless they reject.
 *
 * <p>Public for limits decided outside Sluice's own filters and methods, such as those of
 * {@code sluice-spring-cloud-gateway}, whose responses carry the same fields; the starter
 * registers one as the bean {@code sluiceRateLimitResponseHeaders}.
 */
public final class RateLimitResponseHeaders implements CallScopedListener {

    private static final String POLICIES = RateLimitResponseHeaders.class.getName() + ".policies";

    private final SluiceProperties.Headers headers;

    RateLimitResponseHeaders(SluiceProperties.Headers headers) {
        this.headers = headers;
    }

    /**
     * Captures the current request, if any. Limiters that wait stay out: they usually guard
     * outbound calls, whose quota is not the client's business.
     */
    @Override
    public @Nullable RateLimitListener forThisCall() {
        if (!(RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes)
                || attributes.getResponse() == null) {
            return null;
        }
        HttpServletRequest request = attributes.getRequest();
        HttpServletResponse response = attributes.getResponse();
        return new RateLimitListener() {
            @Override
            public void onDecision(RateLimiter limiter, String key, Decision decision) {
                if (limiter.onLimit() == OnLimit.REJECT) {
                    policies(request).record(limiter.name(), decision);
                    write(request, response);
                }
            }
        };
    }

    /**
     * Records a decision made outside a limited call (an HTTP rule's) and writes the headers, as
     * the call's listener does for a limiter that rejects.
     *
     * @param request     the request
     * @param response    its response
     * @param limiterName the deciding limiter
     * @param decision    its decision
     */
    public void writeDecision(HttpServletRequest request, HttpServletResponse response, String limiterName,
                       Decision decision) {
        policies(request).record(limiterName, decision);
        write(request, response);
    }

    /**
     * Records a rejection, which the call's listener may not have heard (a limiter that waits,
     * or one called outside the aspect), then writes every header with {@code Retry-After}.
     *
     * @param request     the request
     * @param response    its response
     * @param limiterName the rejecting limiter
     * @param decision    its decision
     */
    public void writeRejection(HttpServletRequest request, HttpServletResponse response, String limiterName,
                        Decision decision) {
        long retryAfter = policies(request).reject(limiterName, decision);
        write(request, response);
        response.setHeader("Retry-After", String.valueOf(retryAfter));
    }

    /** This request's policies; created under the request's lock, as worker threads may share it. */
    private static RateLimitPolicies policies(HttpServletRequest request) {
        synchronized (request) {
            Object policies = request.getAttribute(POLICIES);
            if (policies == null) {
                policies = new RateLimitPolicies();
                request.setAttribute(POLICIES, policies);
            }
            return (RateLimitPolicies) policies;
        }
    }

    /** Writes the headers unless the response is committed. */
    private void write(HttpServletRequest request, HttpServletResponse response) {
        if (headers == SluiceProperties.Headers.NONE) {
            return;
        }
        synchronized (request) {
            if (!response.isCommitted()) {
                policies(request).fields(headers).forEach(response::setHeader);
            }
        }
    }
}
