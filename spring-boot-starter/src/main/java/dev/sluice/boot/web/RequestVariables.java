package dev.sluice.boot.web;

import dev.sluice.aop.RateLimitVariables;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * {@code #ip} and {@code #request} for key, cost and plan expressions, on either web stack: the
 * request of the call being decided, and its client address through the trusted proxies.
 *
 * @param <R> the stack's request type
 *
 * <p>Public for the auto-configurations of Spring MVC and WebFlux, in their own packages.
 */
public final class RequestVariables<R> implements RateLimitVariables {

    private final Supplier<@Nullable R> currentRequest;
    private final Function<R, @Nullable String> clientIp;

    /**
     * @param currentRequest the request of the call being decided, or {@code null} outside one
     * @param clientIp       the client address of a request
     */
    public RequestVariables(Supplier<@Nullable R> currentRequest, Function<R, @Nullable String> clientIp) {
        this.currentRequest = currentRequest;
        this.clientIp = clientIp;
    }

    @Override
    public Set<String> names() {
        return Set.of("ip", "request");
    }

    @Override
    public @Nullable Object value(String name) {
        R request = currentRequest.get();
        if (request == null) {
            return null;
        }
        return name.equals("ip") ? clientIp.apply(request) : request;
    }
}
