package dev.sluice.boot;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.annotation.OnLimit;
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
 * Puts rate-limit headers on the response of the current request: after each decision of a
 * limited method called while handling it, and again when a rejection becomes a 429. Each
 * rejecting limiter of the call ({@code onLimit = REJECT}) is one policy of
 * {@code RateLimit-Policy} and {@code RateLimit} (draft-ietf-httpapi-ratelimit-headers-10),
 * whose quota and window are those of the tier the decision binds; the {@code X-RateLimit-*}
 * headers carry the most restrictive one. Limiters that wait stay out, unless they reject.
 */
final class RateLimitResponseHeaders implements RateLimitListener {

    private static final String DECISIONS = RateLimitResponseHeaders.class.getName() + ".decisions";

    private final SluiceProperties.Headers headers;

    RateLimitResponseHeaders(SluiceProperties.Headers headers) {
        this.headers = headers;
    }

    /** One limiter's latest decision in this request; the limiter is unknown for foreign rejections. */
    private record Policy(String name, @Nullable RateLimiter limiter, Decision decision) {
    }

    /** Limiters that wait usually guard outbound calls: their quota is not the client's business. */
    @Override
    public void onDecision(RateLimiter limiter, String key, Decision decision) {
        if (limiter.onLimit() == OnLimit.REJECT
                && RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes
                && attributes.getResponse() != null) {
            record(attributes.getRequest(), limiter.name(), limiter, decision);
            write(attributes.getRequest(), attributes.getResponse());
        }
    }

    /** Records a rejection no listener saw (a limiter built without this one), then writes every header. */
    void writeRejection(HttpServletRequest request, HttpServletResponse response, String limiterName,
                        Decision decision) {
        synchronized (request) {
            if (!policies(request).containsKey(limiterName)) {
                record(request, limiterName, null, decision);
            }
        }
        write(request, response);
        response.setHeader("Retry-After", String.valueOf(seconds(decision.retryAfter())));
    }

    private static void record(HttpServletRequest request, String name, @Nullable RateLimiter limiter,
                               Decision decision) {
        synchronized (request) {
            policies(request).put(name, new Policy(name, limiter, decision));
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

    private void write(HttpServletRequest request, HttpServletResponse response) {
        if (headers == SluiceProperties.Headers.NONE) {
            return;
        }
        synchronized (request) {
            if (!response.isCommitted()) {
                write(List.copyOf(policies(request).values()), response);
            }
        }
    }

    private void write(List<Policy> policies, HttpServletResponse response) {
        if (headers != SluiceProperties.Headers.X_RATELIMIT) {
            response.setHeader("RateLimit-Policy", policies.stream()
                    .map(policy -> quoted(policy.name) + ";q=" + policy.decision.limit() + window(policy))
                    .collect(Collectors.joining(", ")));
            response.setHeader("RateLimit", policies.stream()
                    .map(policy -> quoted(policy.name) + ";r=" + policy.decision.remaining()
                            + ";t=" + seconds(policy.decision.resetAfter()))
                    .collect(Collectors.joining(", ")));
        }
        if (headers != SluiceProperties.Headers.IETF) {
            Decision tightest = policies.stream().map(Policy::decision)
                    .min(Comparator.comparing(Decision::allowed).thenComparingLong(Decision::remaining))
                    .orElseThrow();
            response.setHeader("X-RateLimit-Limit", String.valueOf(tightest.limit()));
            response.setHeader("X-RateLimit-Remaining", String.valueOf(tightest.remaining()));
            response.setHeader("X-RateLimit-Reset", String.valueOf(seconds(tightest.resetAfter())));
        }
    }

    /** {@code ;w=<seconds>} of the tier the decision binds, when the limiter is known. */
    private static String window(Policy policy) {
        if (policy.limiter == null) {
            return "";
        }
        return policy.limiter.tiers().stream()
                .filter(tier -> tier.limit() == policy.decision.limit())
                .map(Tier::window)
                .max(Comparator.naturalOrder())
                .map(window -> ";w=" + seconds(window))
                .orElse("");
    }

    /** A structured-field string. */
    private static String quoted(String name) {
        return '"' + name.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    /** Whole seconds, rounded up. */
    static long seconds(Duration duration) {
        long millis = duration.toMillis();
        return millis / 1_000 + (millis % 1_000 > 0 ? 1 : 0);
    }
}
