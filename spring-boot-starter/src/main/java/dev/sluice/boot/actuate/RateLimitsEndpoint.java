package dev.sluice.boot.actuate;

import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.StoreQueue;
import dev.sluice.Tier;
import dev.sluice.TopKeys;
import dev.sluice.boot.autoconfigure.PropertiesLimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.security.Principal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.lang.Nullable;

/**
 * The {@code ratelimits} actuator endpoint: every limiter with its tiers, its store, the state of
 * the store's circuit breaker and its queue (for a store whose decisions wait in one), its
 * failure policy, and the calls it allowed and rejected
 * since the application started; and, for operators, forgetting one key of a limiter, which
 * unblocks that caller ({@code DELETE /actuator/ratelimits/{limiter}/{key}}), and changing a
 * limiter's tier of one window, or one plan's, while the application runs, counts kept
 * ({@code POST /actuator/ratelimits/{limiter}} with {@code {"limit": "2000", "window": "10s"}},
 * and {@code "plan": "pro"} for a plan).
 * Every limiter of the application's {@link RateLimiterRegistry} is here: annotated, configured
 * rule, or built in code.
 *
 * <p>Its access is read-only by default: exposing the endpoint shows the limiters, and the
 * delete and write operations exist only once the application grants full access with
 * {@code management.endpoint.ratelimits.access=unrestricted}. Protect it then as any endpoint
 * that changes the application, with Spring Security for one.
 */
@Endpoint(id = "ratelimits", defaultAccess = Access.READ_ONLY)
// Spring's own @Nullable, deprecated in Spring Framework 7: the one mark of an optional operation
// parameter that the actuators of both Spring Boot lines read.
@SuppressWarnings("deprecation")
public class RateLimitsEndpoint {

    private final RateLimiterRegistry registry;
    private final RateLimitStatistics statistics;
    private final LimitChanges changes;
    private final KeyMask keyMask;

    RateLimitsEndpoint(RateLimiterRegistry registry, RateLimitStatistics statistics, LimitChanges changes,
                       KeyMask keyMask) {
        this.registry = registry;
        this.statistics = statistics;
        this.changes = changes;
        this.keyMask = keyMask;
    }

    /**
     * Describes every limiter.
     *
     * @return the limiters, by name
     */
    @ReadOperation
    public RateLimitsDescriptor rateLimits() {
        return new RateLimitsDescriptor(registry.limiters().stream().map(this::describe).toList());
    }

    /**
     * Describes one limiter, as the list does ({@code GET /actuator/ratelimits/{limiter}}): its
     * tiers, plans, store, live change and counts.
     *
     * @param limiter the limiter's name
     * @return the limiter, or {@code null} (404) when no limiter has the name
     */
    @ReadOperation
    public @Nullable LimiterDescriptor limiter(@Selector String limiter) {
        return registry.find(limiter).map(this::describe).orElse(null);
    }

    private LimiterDescriptor describe(RateLimiter limiter) {
        Map<String, List<TierDescriptor>> plans = new LinkedHashMap<>();
        limiter.plans().forEach((plan, tiers) -> plans.put(plan, TierDescriptor.of(tiers)));
        return new LimiterDescriptor(limiter.name(), TierDescriptor.of(limiter.tiers()), plans,
                StoreName.of(limiter.store()),
                limiter.store().circuitBreaker().map(breaker -> breaker.state().name()).orElse(null),
                limiter.store().queue().map(QueueDescriptor::of).orElse(null),
                limiter.onStoreFailure().name(),
                statistics.allowed(limiter.name()), statistics.rejected(limiter.name()),
                changes.inForce(limiter.name()).flatMap(change -> changes.configured(limiter.name())
                        .map(configured -> ChangeDescriptor.of(change, configured))).orElse(null));
    }

    /**
     * Who a limiter is limiting: the keys it rejected most since start, and those most often
     * admitted with at most a tenth of their limit left ({@code GET /actuator/ratelimits/{limiter}/top}).
     * Keys are masked ({@code hmac:} and 16 hex digits of their HMAC-SHA-256 under
     * {@code sluice.top-keys.mask-secret}) unless {@code sluice.top-keys.plain-keys} is set.
     *
     * @param limiter the limiter's name
     * @param list    {@code top}
     * @param count   how many keys each list shows at most; 10 by default
     * @return the lists, or {@code null} (404) when no limiter has the name, {@code list} is not
     *         {@code top}, or {@code sluice.top-keys.enabled} is false
     */
    @ReadOperation
    public @Nullable TopKeysDescriptor top(@Selector String limiter, @Selector String list, @Nullable Integer count) {
        if (!"top".equals(list) || registry.find(limiter).isEmpty() || !statistics.keepsTopKeys()) {
            return null;
        }
        int shown = count == null ? 10 : Math.max(count, 0);
        return statistics.topKeys(limiter)
                .map(top -> new TopKeysDescriptor(limiter, keyMask.masks(), shown(top.rejected(shown)),
                        shown(top.nearLimit(shown))))
                .orElseGet(() -> new TopKeysDescriptor(limiter, keyMask.masks(), List.of(), List.of()));
    }

    private List<TopKeyDescriptor> shown(List<TopKeys.Entry> entries) {
        return entries.stream()
                .map(entry -> new TopKeyDescriptor(keyMask.show(entry.key()), entry.count(), entry.overcount()))
                .toList();
    }

    /**
     * Sets one tier of a limiter, or of one of its plans, from its next call on: the tier of the
     * given window is given the new figures (its algorithm and options kept unless given), or
     * added when the limiter has no tier of that window; a plan the limiter does not have is
     * added with this one tier. Counts are kept wherever the tier keeps its algorithm and window.
     * Values are written as in configuration: {@code "limit": "2000", "window": "10s"}, and
     * optionally {@code "algorithm": "fixed-window"}, {@code "countRejected": "true"},
     * {@code "blockFor": "15m"}. With the Redis store every instance on it makes the change
     * (unless {@code sluice.redis.share-changes} is false), within 2 seconds, and keeps it until
     * it is taken back ({@link #revert}); otherwise it lives in this instance until it restarts.
     *
     * @param limiter       the limiter's name
     * @param plan          the plan to change; {@code null} for the default tiers
     * @param limit         the tier's limit; required (optional here so that a request without
     *                      it gets Sluice's 400 naming what is missing)
     * @param window        the tier's window, which picks the tier; required, as {@code limit}
     * @param algorithm     the tier's algorithm; {@code null} to keep it (or, for a new tier, the
     *                      sliding window)
     * @param countRejected whether rejected calls count; {@code null} to keep it
     * @param blockFor      how long a rejection blocks the key; {@code null} to keep it
     * @param caller        who asks, recorded as the change's author when known
     * @return the limiter as changed, or {@code null} when no limiter has the name
     * @throws SluiceConfigurationException when the tier is incomplete or invalid; the limiter
     *         is then unchanged
     * @throws dev.sluice.StoreUnavailableException when the change cannot be shared through Redis;
     *         the limiter is then unchanged
     */
    @WriteOperation
    public @Nullable LimiterDescriptor change(@Selector String limiter, @Nullable String plan, @Nullable String limit,
                                              @Nullable String window, @Nullable String algorithm,
                                              @Nullable String countRejected, @Nullable String blockFor,
                                              SecurityContext caller) {
        Optional<RateLimiter> named = registry.find(limiter);
        if (named.isEmpty()) {
            return null;
        }
        RateLimiter changing = named.get();
        Map<String, String> given = new LinkedHashMap<>();
        putIfGiven(given, "limit", limit);
        putIfGiven(given, "window", window);
        putIfGiven(given, "algorithm", algorithm);
        putIfGiven(given, "count-rejected", countRejected);
        putIfGiven(given, "block-for", blockFor);
        Tier asGiven = tier(given);
        // The changes' lock, which they take before the limiter's: a change made here and one read
        // from other instances are made one at a time, and never wait for each other in turn.
        synchronized (changes) {
            List<Tier> tiers = new ArrayList<>(plan == null ? changing.tiers()
                    : changing.plans().getOrDefault(plan, List.of()));
            int index = -1;
            for (int i = 0; i < tiers.size() && index < 0; i++) {
                Tier old = tiers.get(i);
                if (old.window().equals(asGiven.window()) && (algorithm == null || old.algorithm() == asGiven.algorithm())) {
                    index = i;
                }
            }
            if (index < 0) {
                tiers.add(asGiven);
            } else {
                // What was not given is kept from the tier it changes.
                Tier old = tiers.get(index);
                Map<String, String> kept = new LinkedHashMap<>();
                kept.put("algorithm", old.algorithm().name());
                kept.put("count-rejected", String.valueOf(old.countRejected()));
                kept.put("block-for", old.blockFor().toString());
                kept.putAll(given);
                tiers.set(index, tier(kept));
            }
            Map<String, List<Tier>> plans = new LinkedHashMap<>(changing.plans());
            if (plan != null) {
                plans.put(plan, tiers);
            }
            LimitChanges.Limits limits = new LimitChanges.Limits(plan == null ? tiers : changing.tiers(), plans);
            try {
                changes.change(changing, limits, author(caller), registry.clock().instant());
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigurationException("The tier cannot be set on limiter '" + limiter + "': "
                        + e.getMessage(), "Give figures the limiter's store supports, at least its cost.", e);
            }
        }
        return describe(changing);
    }

    /**
     * Takes back the live change of a limiter: its configured limits apply again, in every
     * instance when the change was shared. Over HTTP, {@code DELETE /actuator/ratelimits/{limiter}},
     * which {@link RateLimitsEndpointWebExtension} answers.
     *
     * @param limiter the limiter's name
     * @return whether the limiter exists and had a change
     * @throws dev.sluice.StoreUnavailableException when the change cannot be taken back through Redis
     */
    @DeleteOperation
    public boolean revert(@Selector String limiter) {
        Optional<RateLimiter> named = registry.find(limiter);
        return named.isPresent() && changes.inForce(limiter).isPresent() && changes.revert(named.get());
    }

    private static @Nullable String author(SecurityContext caller) {
        Principal principal = caller.getPrincipal();
        return principal == null ? null : principal.getName();
    }

    private static void putIfGiven(Map<String, String> values, String name, @Nullable String value) {
        if (value != null) {
            values.put(name, value);
        }
    }

    /** A tier from values written as in configuration, bound and checked as configured tiers are. */
    private static Tier tier(Map<String, String> values) {
        Map<String, String> flat = new LinkedHashMap<>();
        values.forEach((name, value) -> flat.put("tier." + name, value));
        SluiceProperties.TierProperties bound;
        try {
            bound = new Binder(new MapConfigurationPropertySource(flat))
                    .bind("tier", Bindable.of(SluiceProperties.TierProperties.class))
                    .orElseGet(SluiceProperties.TierProperties::new);
        } catch (RuntimeException e) {
            throw new SluiceConfigurationException("The tier cannot be read: " + e.getMessage(), "Give a whole"
                    + " number as limit, a duration (10s, PT10S) as window and block-for, and an algorithm such as"
                    + " fixed-window.", e);
        }
        return PropertiesLimitOverrides.tier("the tier", bound);
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
        Optional<RateLimiter> named = registry.find(limiter);
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
     * @param tiers         its default tiers
     * @param plans         the tiers of each of its plans, by name
     * @param store         the store's type
     * @param storeState    the state of the store's circuit breaker (CLOSED, OPEN or HALF_OPEN);
     *                      null for a store without one
     * @param storeQueue    the queue the store's decisions wait in; null for a store without one
     * @param failurePolicy what its calls do when the store cannot decide them
     * @param allowed       calls allowed since start
     * @param rejected      calls rejected since start, those rejected because the store was
     *                      overloaded included
     * @param change        the live change its limits come from; null while it has its configured ones
     */
    public record LimiterDescriptor(String name, List<TierDescriptor> tiers, Map<String, List<TierDescriptor>> plans,
                                    String store, @Nullable String storeState, @Nullable QueueDescriptor storeQueue,
                                    String failurePolicy, long allowed, long rejected,
                                    @Nullable ChangeDescriptor change) {
    }

    /**
     * A live change of a limiter's limits.
     *
     * @param version         its version: a later change has a higher one
     * @param by              who made it, when known
     * @param at              when, ISO-8601
     * @param configuredTiers the default tiers it replaced, which taking it back restores
     * @param configuredPlans the plans it replaced
     */
    public record ChangeDescriptor(long version, @Nullable String by, String at, List<TierDescriptor> configuredTiers,
                                   Map<String, List<TierDescriptor>> configuredPlans) {

        static ChangeDescriptor of(LimitChanges.Change change, LimitChanges.Limits configured) {
            Map<String, List<TierDescriptor>> plans = new LinkedHashMap<>();
            configured.plans().forEach((plan, tiers) -> plans.put(plan, TierDescriptor.of(tiers)));
            return new ChangeDescriptor(change.version(), change.by(), change.at().toString(),
                    TierDescriptor.of(configured.tiers()), plans);
        }
    }

    /**
     * Who a limiter is limiting.
     *
     * @param limiter   the limiter's name
     * @param masked    whether keys are shown masked
     * @param rejected  the keys rejected most since start, most first
     * @param nearLimit the keys most often admitted with at most a tenth of their limit left
     */
    public record TopKeysDescriptor(String limiter, boolean masked, List<TopKeyDescriptor> rejected,
                                    List<TopKeyDescriptor> nearLimit) {
    }

    /**
     * One key of a top-keys list.
     *
     * @param key       the key, masked unless configured otherwise
     * @param count     the calls counted for it; at least its true number
     * @param overcount by how much {@code count} may overstate it (0: exact)
     */
    public record TopKeyDescriptor(String key, long count, long overcount) {
    }

    /**
     * The queue a store's decisions wait in, shared by every limiter on the store.
     *
     * @param queued     decisions waiting to be sent now
     * @param capacity   the most that may wait
     * @param overloaded decisions that got the store's overload policy since start
     */
    public record QueueDescriptor(int queued, int capacity, long overloaded) {

        static QueueDescriptor of(StoreQueue queue) {
            return new QueueDescriptor(queue.queued(), queue.capacity(), queue.overloaded());
        }
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

        static List<TierDescriptor> of(List<Tier> tiers) {
            return tiers.stream().map(tier -> new TierDescriptor(tier.limit(), tier.window().toString(),
                    tier.algorithm().name(), tier.countRejected(), tier.blockFor().toString())).toList();
        }
    }
}
