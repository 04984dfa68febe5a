package dev.sluice.boot;

import dev.sluice.StoreUnavailableException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code ratelimits} endpoint over HTTP: {@code DELETE /actuator/ratelimits/{limiter}/{key}}
 * answers {@code 204 No Content} once the key is forgotten, {@code 404 Not Found} for a limiter
 * that does not exist, and {@code 503 Service Unavailable} when the store cannot be reached. No
 * answer carries the key. Like the endpoint's own delete operation, it exists only with
 * {@code management.endpoint.ratelimits.access=unrestricted}.
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

    private final RateLimitsEndpoint endpoint;

    RateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    /**
     * Forgets one key of a limiter, as {@link RateLimitsEndpoint#reset} does.
     *
     * @param limiter the limiter's name
     * @param key     the rest of the path: the key, {@code /} included
     * @return an empty response: 204, 404 or 503
     */
    @DeleteOperation
    public WebEndpointResponse<Void> reset(@Selector String limiter,
                                           @Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
        try {
            return new WebEndpointResponse<>(endpoint.reset(limiter, key)
                    ? WebEndpointResponse.STATUS_NO_CONTENT : WebEndpointResponse.STATUS_NOT_FOUND);
        } catch (StoreUnavailableException e) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
    }
}
