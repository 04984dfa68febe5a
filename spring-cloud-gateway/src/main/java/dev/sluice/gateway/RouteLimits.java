package dev.sluice.gateway;

import dev.sluice.LimitDefinition;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.aop.LimitOverrides;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.aop.RateLimitVariables;
import dev.sluice.boot.actuate.LimitChanges;
import dev.sluice.boot.autoconfigure.PropertiesLimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.ClientIpResolver;
import dev.sluice.boot.web.RuleExpressions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * The limiters of gateway routes, whichever the gateway: each route's options checked and its
 * limiter registered (so that metrics, the actuator endpoint, headers and failure policies treat
 * it as any other), and per request the key and plan its expressions give. The expressions read
 * {@code #ip}, {@code #request}, {@code #path} and beans, with no more power than the expressions
 * of {@code sluice.http.rules} ({@link RuleExpressions}).
 */
final class RouteLimits {

    private static final System.Logger LOGGER = System.getLogger(RouteLimits.class.getName());

    private final RateLimiterRegistry registry;
    private final LimitChanges changes;
    /** The names of the limiters registered here for routes' own tiers. */
    private final Set<String> routeLimiters = ConcurrentHashMap.newKeySet();
    private final LimitOverrides overrides;
    private final KeyErrorPolicy onKeyError;
    private final RuleExpressions expressions;
    private final ClientIpResolver clientIp;

    RouteLimits(RateLimiterRegistry registry, LimitChanges changes, LimitOverrides overrides,
                KeyErrorPolicy onKeyError, ClientIpResolver clientIp, BeanFactory beans) {
        this.registry = registry;
        this.changes = changes;
        this.overrides = overrides;
        this.onKeyError = onKeyError;
        this.clientIp = clientIp;
        this.expressions = new RuleExpressions(Set.of("ip", "request", "path"), "#ip (the client address), #request"
                + " (the request) or #path (the variables of the route's path: #path['orgId'])",
                new BeanFactoryResolver(beans));
    }

    /**
     * One route's limit, as it decides requests.
     *
     * @param key  the key expression, or {@code null} for the gateway's key
     * @param plan the plan expression, or {@code null} for the default tiers
     */
    record RouteLimit(String name, RateLimiter limiter, @Nullable SpelExpression key, @Nullable SpelExpression plan,
                      boolean usesIp) {
    }

    /**
     * Checks a route's options and registers its limiter. A route defined again while the gateway
     * runs (its routes refreshed) keeps the limiter of its own tiers, counts kept, with the tiers
     * and plans it has now; a live change of that limiter holds, as through a configuration
     * refresh.
     *
     * @param property where the options are set, for messages: {@code route 'api' sluice-rate-limiter}
     * @param routeId  the route's id, which names a limiter of the route's own tiers
     * @return the route's limit, or {@code null} when {@code sluice.limits.<name>.enabled} is false
     * @throws SluiceConfigurationException when the options are incomplete or invalid
     */
    @Nullable RouteLimit limit(String property, String routeId, RouteLimitOptions<?> options) {
        String named = options.getLimiter();
        boolean ownTiers = !options.getTiers().isEmpty();
        if (named != null && !named.isBlank() && ownTiers) {
            throw new SluiceConfigurationException(property + " names limiter '" + named + "' and has tiers of its"
                    + " own", "Either name a limiter of sluice.limits (limiter: " + named + ") or give the route's"
                    + " tiers (tiers[0].limit, tiers[0].window), not both.", null);
        }
        if ((named == null || named.isBlank()) && !ownTiers) {
            throw new SluiceConfigurationException(property + " has neither a limiter nor tiers",
                    "Name a limiter of sluice.limits (limiter: <name>) or give the route tiers of its own"
                    + " (tiers[0].limit: 100, tiers[0].window: 1m).", null);
        }
        String name = ownTiers ? routeId : named.trim();
        // Marks the name as a limiter's, so that sluice.limits.<name> is not refused as unknown.
        if (!overrides.enabled(name)) {
            return null;
        }
        List<Tier> tiers;
        if (ownTiers) {
            if (overrides.tiers(name).isPresent()) {
                throw new SluiceConfigurationException("sluice.limits." + name + ".tiers configure the tiers of"
                        + " route '" + name + "', which has its own", "Set the tiers in " + property + ".tiers;"
                        + " sluice.limits." + name + " may give the route's plans.", null);
            }
            tiers = PropertiesLimitOverrides.tiers(property + ".tiers", options.getTiers());
        } else {
            tiers = overrides.tiers(name).orElseThrow(() -> new SluiceConfigurationException(property
                    + " names limiter '" + name + "', which sluice.limits does not configure", "Give it tiers:"
                    + " sluice.limits." + name + ".tiers[0].limit and .window, or name a configured limiter.", null));
        }
        SpelExpression key = expressions.parse(property + ".key", name, options.getKey());
        SpelExpression plan = expressions.parse(property + ".plan", name, options.getPlan());
        RateLimiter limiter;
        try {
            RateLimiter defined = ownTiers && routeLimiters.contains(name) ? registry.find(name).orElse(null) : null;
            if (defined != null) {
                changes.configure(defined, tiers, overrides.plans(name));
                limiter = defined;
            } else {
                limiter = registry.register(new LimitDefinition(name, options.getKey(), tiers, "1", OnLimit.REJECT,
                        Duration.ZERO, "", null, null, options.getPlan(), overrides.plans(name)));
                if (ownTiers) {
                    routeLimiters.add(name);
                }
            }
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(property + " (" + name + ") cannot be built: " + e.getMessage(),
                    "Give the route's limiter a name no other limiter has, and tiers its store supports.", e);
        }
        return new RouteLimit(name, limiter, key, plan, usesIp(key) || usesIp(plan));
    }

    /**
     * A route the gateway no longer has: the limiter of its own tiers goes from the registry (a
     * named limiter of {@code sluice.limits} stays).
     */
    void removed(RouteLimit limit) {
        if (routeLimiters.remove(limit.name())) {
            registry.remove(limit.name());
        }
    }

    private static boolean usesIp(@Nullable SpelExpression expression) {
        return expression != null && RateLimitVariables.referencedBy(expression).contains("ip");
    }

    /**
     * The values of a request's variables.
     *
     * @param limit         the route's limit
     * @param request       the request, {@code #request}
     * @param remoteAddress the socket peer's address, or {@code null}
     * @param headers       the request's header values by name
     * @param path          the variables of the route's path pattern
     */
    Map<String, @Nullable Object> variables(RouteLimit limit, Object request, Supplier<@Nullable String> remoteAddress,
                                            java.util.function.Function<String, List<String>> headers,
                                            Map<String, ?> path) {
        Map<String, @Nullable Object> values = new HashMap<>();
        // Resolving the client address reads forwarding headers: only when an expression wants it.
        values.put("ip", limit.usesIp() ? clientIp.resolve(remoteAddress.get(), headers) : null);
        values.put("request", request);
        values.put("path", path);
        return values;
    }

    /**
     * The key a request is counted under.
     *
     * @param gatewayKey the gateway's key for the request, used when the route has no key expression
     * @throws RateLimitKeyException when the expression fails or gives no key
     */
    String key(RouteLimit limit, Map<String, @Nullable Object> variables, String gatewayKey) {
        if (limit.key() == null) {
            return gatewayKey;
        }
        String key = RuleExpressions.value(limit.name(), "key", limit.key(), context(variables), "");
        return key == null ? gatewayKey : key;
    }

    /**
     * The plan a request is on.
     *
     * @throws RateLimitKeyException when the expression fails
     */
    @Nullable String plan(RouteLimit limit, Map<String, @Nullable Object> variables) {
        return limit.plan() == null ? null
                : RuleExpressions.value(limit.name(), "plan", limit.plan(), context(variables), null);
    }

    private StandardEvaluationContext context(Map<String, @Nullable Object> variables) {
        return expressions.context(variables);
    }

    /**
     * What ends a request admitted under a route whose limiter holds permits while requests run:
     * releases its permit, without waiting, once; {@code null} for a limiter holding none. A
     * permit that cannot be released is left to its lease, where the store keeps one.
     */
    @Nullable Runnable held(RouteLimit limit, String key, @Nullable String plan) {
        RateLimiter limiter = limit.limiter();
        if (!limiter.holdsPermits()) {
            return null;
        }
        Instant admittedAt = registry.clock().instant();
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) {
                limiter.releaseAsync(key, 1, plan, admittedAt).exceptionally(failure -> {
                    LOGGER.log(System.Logger.Level.DEBUG, "Rate limit '" + limit.name() + "' could not release the"
                            + " permit of a request that ended: " + failure.getClass().getName());
                    return null;
                });
            }
        };
    }

    /**
     * What a request whose key or plan cannot be worked out is counted as, once the listeners have
     * heard of it, by {@code sluice.key-error}: under the key of such requests, or not at all
     * ({@code null}).
     *
     * @throws RateLimitKeyException the error, under {@link KeyErrorPolicy#REJECT}
     */
    @Nullable String afterKeyError(RouteLimit limit, RateLimitKeyException error) {
        for (RateLimitListener listener : registry.listeners()) {
            listener.onKeyError(limit.limiter(), error);
        }
        return switch (onKeyError) {
            case REJECT -> throw error;
            case SHARED_KEY -> "(key error)";
            case SKIP -> null;
        };
    }
}
