package dev.sluice.boot;

import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.aop.MethodRateLimiter;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code ratelimits} actuator endpoint: every limiter with its tiers, its store and the
 * state of the store's circuit breaker, its failure policy, and the calls it allowed and rejected
 * since the application started; and, for operators, forgetting one key of a limiter, which
 * unblocks that caller ({@code DELETE /actuator/ratelimits/{limiter}/{key}}).
 *
 * <p>Its access is read-only by default: exposing the endpoint shows the limiters, and the
 * delete operation exists only once the application grants full access with
 * {@code management.endpoint.ratelimits.access=unrestricted}. Protect it then as any endpoint
 * that changes the application, with Spring Security for one.
 */
@Endpoint(id = "ratelimits", defaultAccess = Access.READ_ONLY)
public class RateLimitsEndpoint {

    private final MethodRateLimiter methodRateLimiter;
    private final RateLimitStatistics statistics;

    RateLimitsEndpoint(MethodRateLimiter methodRateLimiter, RateLimitStatistics statistics) {
        this.methodRateLimiter = methodRateLimiter;
        this.statistics = statistics;
    }

    /**
     * Describes every limiter.
     *
     * @return the limiters, by name
     */
    @ReadOperation
    public RateLimitsDescriptor rateLimits() {
        return new RateLimitsDescriptor(methodRateLimiter.limiters().stream()
                .map(limiter -> new LimiterDescriptor(limiter.name(),
                        limiter.tiers().stream().map(TierDescriptor::of).toList(),
                        TimedRateLimitStore.name(limiter.store()),
                        limiter.store().circuitBreaker().map(breaker -> breaker.state().name()).orElse(null),
                        limiter.onStoreFailure().name(),
                        statistics.allowed(limiter.name()), statistics.rejected(limiter.name())))
                .toList());
    }

    /**
     * Forgets one key of a limiter: its counts in every tier and any block, in the limiter's
     * store and its local fallback store, so that the caller's next call is decided afresh. Over
     * HTTP, {@link RateLimitsEndpointWebExtension} answers it.
     *
     * @param limiter the limiter's name
     * @param key     the key, as the limiter's key expression gives it; over HTTP, the rest of the
     *                path, so that keys holding {@code /} (an IPv6 prefix such as
     *                {@code 2001:db8::/64}) need no escaping
     * @return whether the limiter exists
     * @throws dev.sluice.StoreUnavailableException when the store cannot be reached
     */
    @DeleteOperation
    public boolean reset(@Selector String limiter, @Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
        Optional<RateLimiter> named = methodRateLimiter.limiters().stream()
                .filter(candidate -> candidate.name().equals(limiter)).findFirst();
        named.ifPresent(found -> found.reset(String.join("/", key)));
        return named.isPresent();
    }

    /**
     * All limiters.
     *
     * @param limiters the limiters, by name
     */
    public record RateLimitsDescriptor(List<LimiterDescriptor> limiters) {
    }

    /**
     * One limiter.
     *
     * @param name          its name
     * @param tiers         its tiers
     * @param store         the store's type
     * @param storeState    the state of the store's circuit breaker (CLOSED, OPEN or HALF_OPEN);
     *                      null for a store without one
     * @param failurePolicy what its calls do when the store cannot decide them
     * @param allowed       calls allowed since start
     * @param rejected      calls rejected since start
     */
    public record LimiterDescriptor(String name, List<TierDescriptor> tiers, String store, @Nullable String storeState,
                                    String failurePolicy, long allowed, long rejected) {
    }

    /**
     * One tier.
     *
     * @param limit         permits per window
     * @param window        the window, ISO-8601
     * @param algorithm     how calls are counted
     * @param countRejected whether rejected calls count
     * @param blockFor      how long a rejection blocks the key, ISO-8601
     */
    public record TierDescriptor(long limit, String window, String algorithm, boolean countRejected,
                                 String blockFor) {

        static TierDescriptor of(Tier tier) {
            return new TierDescriptor(tier.limit(), tier.window().toString(), tier.algorithm().name(),
                    tier.countRejected(), tier.blockFor().toString());
        }
    }
}
