package dev.sluice.boot.web;

import java.util.Collection;
import java.util.Set;

/**
 * The limiters of the calls this application makes to other services ({@code sluice.client.rules}):
 * when one refuses a call, the application's own client asked for nothing wrong. The web layer
 * answers such a refusal that escapes a handler with {@code 503 Service Unavailable} and
 * {@code Retry-After}, never with a 429, and never names the rule, nor publishes its quota, in
 * the application's own rate-limit headers.
 *
 * <p>Public for the web auto-configurations and the client rules, in their own packages; the
 * starter registers one as the bean {@code sluiceOutboundLimiters} when client rules are
 * configured.
 */
public final class OutboundLimiters {

    /** No outbound limiters: every refusal is the application's client's. */
    public static final OutboundLimiters NONE = new OutboundLimiters(Set.of());

    private final Set<String> names;

    /**
     * The limiters of these names limit outbound calls.
     *
     * @param names the limiters' names
     */
    public OutboundLimiters(Collection<String> names) {
        this.names = Set.copyOf(names);
    }

    /**
     * Whether a limiter limits outbound calls.
     *
     * @param limiterName the limiter's name
     * @return {@code true} for an outbound limiter
     */
    public boolean contains(String limiterName) {
        return names.contains(limiterName);
    }
}
