package dev.sluice.boot.web;

import dev.sluice.Decision;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The rate-limit policies of one request, whatever the web stack, and the header fields they
 * make: each limiter that rejects calls ({@code onLimit = REJECT}) is one policy, with its latest
 * decision in the request. Decisions may be recorded from several threads (a store's, a
 * scheduler's); the fields are read when the headers are written.
 *
 * <p>The fields are those of draft-ietf-httpapi-ratelimit-headers-11. Each policy is one member
 * of {@code RateLimit-Policy} and {@code RateLimit}, named by the limiter, with the quota
 * {@code q} and window {@code w} of the tier its decision binds. In {@code RateLimit}, {@code r}
 * is what that tier still admits and {@code t} the effective window in seconds: for a rejection,
 * the wait after which the call could pass, which {@code Retry-After} gives too; for an admitted
 * call, the time until the tier is back to its full quota. Once the request is rejected, no
 * {@code t} is later than its {@code Retry-After}, as the draft asks. A policy whose decision
 * binds a concurrency tier has the quota unit {@code qu="concurrent-requests"}, no window, and
 * no {@code t}: nobody knows when a running request ends. The {@code X-RateLimit-*} headers carry
 * the most restrictive policy.
 *
 * <p>Public for the header writers of Spring MVC and WebFlux, in their own packages, which keep one
 * per request.
 */
public final class RateLimitPolicies {

    private final Map<String, Policy> policies = new LinkedHashMap<>();
    /** The request's {@code Retry-After} in seconds, once it is rejected. */
    private @Nullable Long retryAfter;

    /** One limiter's latest decision in this request. */
    private record Policy(String name, Decision decision) {

        /** The effective window of {@code RateLimit}'s {@code t}, in whole seconds rounded up. */
        long effectiveWindow() {
            return seconds(decision.allowed() ? decision.resetAfter() : decision.retryAfter());
        }
    }

    /**
     * Records a limiter's decision for this request, replacing its earlier one.
     *
     * @param limiterName the limiter
     * @param decision    its decision
     */
    public synchronized void record(String limiterName, Decision decision) {
        policies.put(limiterName, new Policy(limiterName, decision));
    }

    /**
     * Records the rejection that answers this request.
     *
     * @param limiterName the rejecting limiter
     * @param decision    its decision
     * @return the request's {@code Retry-After}, in whole seconds rounded up
     */
    public synchronized long reject(String limiterName, Decision decision) {
        record(limiterName, decision);
        long seconds = seconds(decision.retryAfter());
        retryAfter = seconds;
        return seconds;
    }

    /**
     * The rate-limit header fields of this request, by name, in the order they are written.
     *
     * @param headers which fields to give
     * @return the fields; none when {@code headers} is {@code NONE} or nothing is recorded
     */
    public synchronized Map<String, String> fields(SluiceProperties.Headers headers) {
        Map<String, String> fields = new LinkedHashMap<>();
        if (headers == SluiceProperties.Headers.NONE || policies.isEmpty()) {
            return fields;
        }
        List<Policy> all = List.copyOf(policies.values());
        if (headers != SluiceProperties.Headers.X_RATELIMIT) {
            fields.put("RateLimit-Policy", all.stream()
                    .map(policy -> quoted(policy.name) + ";q=" + policy.decision.limit() + unitAndWindow(policy.decision))
                    .collect(Collectors.joining(", ")));
            fields.put("RateLimit", all.stream()
                    .map(policy -> quoted(policy.name) + ";r=" + policy.decision.remaining()
                            + (policy.decision.concurrency() ? "" : ";t=" + withinRetryAfter(policy.effectiveWindow())))
                    .collect(Collectors.joining(", ")));
        }
        if (headers != SluiceProperties.Headers.IETF) {
            Policy tightest = all.stream()
                    .min(Comparator.comparing((Policy policy) -> policy.decision.allowed())
                            .thenComparingLong(policy -> policy.decision.remaining()))
                    .orElseThrow();
            fields.put("X-RateLimit-Limit", String.valueOf(tightest.decision.limit()));
            fields.put("X-RateLimit-Remaining", String.valueOf(tightest.decision.remaining()));
            fields.put("X-RateLimit-Reset", String.valueOf(withinRetryAfter(tightest.effectiveWindow())));
        }
        return fields;
    }

    /**
     * Within {@code Retry-After} once rejected: a policy still admitting calls can promise its
     * quota for a shorter window as truly as for its whole one.
     */
    private long withinRetryAfter(long seconds) {
        return retryAfter == null ? seconds : Math.min(seconds, retryAfter);
    }

    /**
     * {@code ;w=<seconds>} of the tier the decision binds, when the store said which; for a tier
     * limiting the calls running at once, the quota unit {@code concurrent-requests}, and no
     * window.
     */
    private static String unitAndWindow(Decision decision) {
        if (decision.concurrency()) {
            return ";qu=\"concurrent-requests\"";
        }
        return decision.window().isZero() ? "" : ";w=" + seconds(decision.window());
    }

    /** A structured-field string; limiter names are printable ASCII. */
    private static String quoted(String name) {
        return '"' + name.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    /**
     * Whole seconds, rounded up.
     *
     * @param duration a duration
     * @return its seconds
     */
    static long seconds(Duration duration) {
        long millis = duration.toMillis();
        return millis / 1_000 + (millis % 1_000 > 0 ? 1 : 0);
    }
}
