package dev.sluice.boot.actuate;

import dev.sluice.StoreUnavailableException;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import java.util.Arrays;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.lang.Nullable;

/**
 * The {@code ratelimits} endpoint over HTTP: {@code DELETE /actuator/ratelimits/{limiter}/{key}}
 * answers {@code 204 No Content} once the key is forgotten, {@code 404 Not Found} for a limiter
 * that does not exist, and {@code 503 Service Unavailable} when the store cannot be reached. No
 * answer carries the key. {@code POST /actuator/ratelimits/{limiter}} changes tiers live and
 * answers {@code 200} with the limiter as changed, {@code 404} for a limiter that does not
 * exist and {@code 400 Bad Request} for tiers that are incomplete or invalid. Like the
 * endpoint's own delete and write operations, these exist only with
 * {@code management.endpoint.ratelimits.access=unrestricted}.
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
// Spring's own @Nullable, deprecated in Spring Framework 7: the one mark of an optional operation
// parameter that the actuators of both Spring Boot lines read.
@SuppressWarnings("deprecation")
public class RateLimitsEndpointWebExtension {

    private final RateLimitsEndpoint endpoint;
    /**
     * Whether the rest of the path reaches the operation with the limiter's segment in front of
     * it, as WebFlux's endpoint mapping gives it: the segments after the first variable of the
     * pattern, not after the last.
     */
    private final boolean limiterLeadsTheKey;

    RateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
        this(endpoint, false);
    }

    RateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint, boolean limiterLeadsTheKey) {
        this.endpoint = endpoint;
        this.limiterLeadsTheKey = limiterLeadsTheKey;
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
        if (limiterLeadsTheKey && key.length > 1 && key[0].equals(limiter)) {
            key = Arrays.copyOfRange(key, 1, key.length);
        }
        try {
            return new WebEndpointResponse<>(endpoint.reset(limiter, key)
                    ? WebEndpointResponse.STATUS_NO_CONTENT : WebEndpointResponse.STATUS_NOT_FOUND);
        } catch (StoreUnavailableException e) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
    }

    /**
     * Takes back the live change of a limiter, as {@link RateLimitsEndpoint#revert} does.
     *
     * @param limiter the limiter's name
     * @return an empty response: 204, 404 (no such limiter, or no change) or 503
     */
    @DeleteOperation
    public WebEndpointResponse<Void> revert(@Selector String limiter) {
        try {
            return new WebEndpointResponse<>(endpoint.revert(limiter)
                    ? WebEndpointResponse.STATUS_NO_CONTENT : WebEndpointResponse.STATUS_NOT_FOUND);
        } catch (StoreUnavailableException e) {
            return new WebEndpointResponse<>(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
    }

    /**
     * Sets one tier of a limiter, or of one of its plans, as {@link RateLimitsEndpoint#change} does.
     *
     * @param limiter       the limiter's name
     * @param plan          the plan to change; {@code null} for the default tiers
     * @param limit         the tier's limit; required (optional here so that a request without
     *                      it gets Sluice's 400 naming what is missing)
     * @param window        the tier's window, which picks the tier; required, as {@code limit}
     * @param algorithm     the tier's algorithm; {@code null} to keep it
     * @param countRejected whether rejected calls count; {@code null} to keep it
     * @param blockFor      how long a rejection blocks the key; {@code null} to keep it
     * @param caller        who asks, recorded as the change's author when known
     * @return the limiter as changed (200), an empty 404, a 400 whose {@code error} says
     *         what is wrong with the tiers, or a 503 when the change cannot be shared through Redis
     */
    @WriteOperation
    public WebEndpointResponse<Object> change(@Selector String limiter, @Nullable String plan, @Nullable String limit,
                                              @Nullable String window, @Nullable String algorithm,
                                              @Nullable String countRejected, @Nullable String blockFor,
                                              SecurityContext caller) {
        try {
            RateLimitsEndpoint.LimiterDescriptor changed = endpoint.change(limiter, plan, limit, window, algorithm,
                    countRejected, blockFor, caller);
            return changed == null ? new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND)
                    : new WebEndpointResponse<>(changed);
        } catch (SluiceConfigurationException e) {
            return new WebEndpointResponse<>(Map.of("error", e.getMessage() + " " + e.action()),
                    WebEndpointResponse.STATUS_BAD_REQUEST);
        } catch (StoreUnavailableException e) {
            return new WebEndpointResponse<>(Map.of("error", e.getMessage()),
                    WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
    }
}
