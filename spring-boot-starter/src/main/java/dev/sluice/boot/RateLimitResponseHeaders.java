package dev.sluice.boot;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.annotation.OnLimit;
import dev.sluice.aop.CallScopedListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Puts rate-limit headers on the response of the request a limited call was made for: after
 * each decision of the call, on whatever thread it completes (the request is captured on the
 * thread making the call), and again when a rejection becomes a 429.
 *
 * <p>The fields are those of draft-ietf-httpapi-ratelimit-headers-11. Each rejecting limiter of
 * the request ({@code onLimit = REJECT}) is one policy of {@code RateLimit-Policy} and
 * {@code RateLimit}, named by the limiter, with the quota {@code q} and window {@code w} of the
 * tier its decision binds. In {@code RateLimit}, {@code r} is what that tier still admits and
 * {@code t} the effective window in seconds: for a rejection, the wait after which the call
 * could pass, which {@code Retry-After} gives too; for an admitted call, the time until the
 * tier is back to its full quota. On a 429 no {@code t} is later than {@code Retry-After}, as
 * the draft asks. The {@code X-RateLimit-*} headers carry the most restrictive policy. Limiters
 * that wait stay out, unless they reject.
 */
final class RateLimitResponseHeaders implements CallScopedListener {

    private static final String DECISIONS = RateLimitResponseHeaders.class.getName() + ".decisions";

    private final SluiceProperties.Headers headers;

    RateLimitResponseHeaders(SluiceProperties.Headers headers) {
        this.headers = headers;
    }

    /** One limiter's latest decision in this request. */
    private record Policy(String name, Decision decision) {

        /** The effective window of {@code RateLimit}'s {@code t}, in whole seconds rounded up. */
        long effectiveWindow() {
            return seconds(decision.allowed() ? decision.resetAfter() : decision.retryAfter());
        }
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
                    record(request, limiter.name(), decision);
                    write(request, response, null);
                }
            }
        };
    }

    /**
     * Records a decision made outside a limited call (an HTTP rule's) and writes the headers, as
     * the call's listener does for a limiter that rejects.
     */
    void writeDecision(HttpServletRequest request, HttpServletResponse response, String limiterName,
                       Decision decision) {
        record(request, limiterName, decision);
        write(request, response, null);
    }

    /**
     * Records a rejection, which the call's listener may not have heard (a limiter that waits,
     * or one called outside the aspect), then writes every header with {@code Retry-After}.
     */
    void writeRejection(HttpServletRequest request, HttpServletResponse response, String limiterName,
                        Decision decision) {
        record(request, limiterName, decision);
        long retryAfter = seconds(decision.retryAfter());
        write(request, response, retryAfter);
        response.setHeader("Retry-After", String.valueOf(retryAfter));
    }

    private static void record(HttpServletRequest request, String name, Decision decision) {
        synchronized (request) {
            policies(request).put(name, new Policy(name, decision));
        }
    }

    /** This request's policies; guarded by the request, which worker threads may share. */
    @SuppressWarnings("unchecked")
    private static Map<String, Policy> policies(HttpServletRequest request) {
        synchronized (request) {
            Object policies = request.getAttribute(DECISIONS);
            if (policies == null) {
                policies = new LinkedHashMap<String, Policy>();
                request.setAttribute(DECISIONS, policies);
            }
            return (Map<String, Policy>) policies;
        }
    }

    /** Writes the headers unless the response is committed; on a 429, no {@code t} beyond its {@code Retry-After}. */
    private void write(HttpServletRequest request, HttpServletResponse response, @Nullable Long retryAfter) {
        if (headers == SluiceProperties.Headers.NONE) {
            return;
        }
        synchronized (request) {
            if (!response.isCommitted()) {
                write(List.copyOf(policies(request).values()), response, retryAfter);
            }
        }
    }

    private void write(List<Policy> policies, HttpServletResponse response, @Nullable Long retryAfter) {
        if (headers != SluiceProperties.Headers.X_RATELIMIT) {
            response.setHeader("RateLimit-Policy", policies.stream()
                    .map(policy -> quoted(policy.name) + ";q=" + policy.decision.limit() + window(policy.decision))
                    .collect(Collectors.joining(", ")));
            response.setHeader("RateLimit", policies.stream()
                    .map(policy -> quoted(policy.name) + ";r=" + policy.decision.remaining()
                            + ";t=" + atMost(policy.effectiveWindow(), retryAfter))
                    .collect(Collectors.joining(", ")));
        }
        if (headers != SluiceProperties.Headers.IETF) {
            Policy tightest = policies.stream()
                    .min(Comparator.comparing((Policy policy) -> policy.decision.allowed())
                            .thenComparingLong(policy -> policy.decision.remaining()))
                    .orElseThrow();
            response.setHeader("X-RateLimit-Limit", String.valueOf(tightest.decision.limit()));
            response.setHeader("X-RateLimit-Remaining", String.valueOf(tightest.decision.remaining()));
            response.setHeader("X-RateLimit-Reset", String.valueOf(atMost(tightest.effectiveWindow(), retryAfter)));
        }
    }

    /**
     * Within {@code Retry-After}: a policy still admitting calls can promise its quota for a
     * shorter window as truly as for its whole one.
     */
    private static long atMost(long seconds, @Nullable Long retryAfter) {
        return retryAfter == null ? seconds : Math.min(seconds, retryAfter);
    }

    /** {@code ;w=<seconds>} of the tier the decision binds, when the store said which. */
    private static String window(Decision decision) {
        return decision.window().isZero() ? "" : ";w=" + seconds(decision.window());
    }

    /** A structured-field string; limiter names are printable ASCII. */
    private static String quoted(String name) {
        return '"' + name.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    /** Whole seconds, rounded up. */
    static long seconds(Duration duration) {
        long millis = duration.toMillis();
        return millis / 1_000 + (millis % 1_000 > 0 ? 1 : 0);
    }
}
