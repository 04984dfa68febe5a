package dev.sluice.boot.web;

import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.LimitDefinition;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.aop.LimitOverrides;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.aop.RateLimitVariables;
import dev.sluice.boot.autoconfigure.PropertiesLimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The limiters of {@code sluice.http.rules}: each rule, checked when the application starts
 * and registered as a limiter of its name, decides the requests whose method and path it
 * matches. Independent of the web stack: the servlet filter and the WebFlux filter hand it the
 * method, the path within the application, and how to find the client address and the request.
 *
 * <p>A rule matches the requests Spring routes to the handlers of its path: its pattern is parsed
 * by the application's own {@link PathPatternParser} (so it is case-insensitive where the
 * application's routing is) and matched against the parsed path, whose segments are decoded and
 * without their matrix parameters ({@code ;jsessionid=...}), as Spring's handler mappings match
 * it; a rule for {@code GET} covers {@code HEAD} too, which Spring routes to {@code GET} handlers.
 *
 * <p>The expressions read {@code #ip}, {@code #request}, {@code #path} and beans, with no more
 * power than that ({@link RuleExpressions}).
 *
 * <p>A rule's {@code condition} is asked first: a request for which it is {@code false} is
 * neither limited nor counted by the rule. A condition that fails, or gives anything but
 * {@code true} or {@code false}, is treated as a key that cannot be worked out
 * ({@code sluice.key-error}).
 *
 * <p>Rules are asked in the order they are configured, each for its own key; the first that
 * rejects ends the request, and the rules after it are not asked. Permits the rules before it
 * took stay taken, as with several limiters on one annotated method: limits that must be
 * all-or-nothing belong in one rule as its tiers, which are decided in one atomic store call.
 *
 * <p>A rule with {@code count-on} counts requests by their outcome: the request takes its permit
 * before the handler runs, as any other, so a key at its limit is still refused; once the status
 * of its response is known, the permit is {@linkplain RateLimiter#giveBack given back} unless the
 * status is one the rule counts. Such a rule needs a store that can give permits back, which is
 * checked when the application starts.
 *
 * <p>A rule with a concurrency tier holds a permit while its request runs, released when the
 * request ends, whatever its status, also when the client goes away.
 *
 * <p>Public for the filters of Spring MVC and WebFlux, in their own packages; the starter builds it.
 */
public final class HttpRateLimitRules {

    private static final System.Logger LOGGER = System.getLogger(HttpRateLimitRules.class.getName());

    private final List<Rule> rules;
    private final KeyErrorPolicy onKeyError;
    private final RateLimiterRegistry registry;
    private final PathPatternParser paths;
    private final RuleExpressions expressions;
    /** The rules whose failed give-backs were logged: each is logged once, as a warning. */
    private final Set<String> warnedGiveBacks = ConcurrentHashMap.newKeySet();

    /**
     * @param paths the application's parser of the paths its handlers are mapped to
     * @param beans resolves {@code @name} in expressions, or {@code null} for none
     */
    HttpRateLimitRules(List<SluiceProperties.Rule> configured, LimitOverrides overrides,
                       RateLimiterRegistry registry, KeyErrorPolicy onKeyError, PathPatternParser paths,
                       @Nullable BeanResolver beans) {
        this.registry = registry;
        this.onKeyError = onKeyError;
        this.paths = paths;
        this.expressions = new RuleExpressions(Set.of("ip", "request", "path"), "#ip (the client address), #request"
                + " (the request) or #path (the path's variables: #path['orgId'])", beans);
        this.rules = ConfiguredRules.parse("sluice.http.rules", configured, SluiceProperties.Rule::getName,
                "headers, metrics and the actuator endpoint", name -> !overrides.enabled(name),
                (property, name, rule) -> parse(property, name, rule, overrides));
    }

    /**
     * One rule, as it decides requests.
     *
     * @param condition whether a request is decided at all; {@code null} for every request
     * @param countOn   the statuses whose requests count; {@code null} for every request
     */
    public record Rule(String name, PathPattern pattern, Set<String> methods, @Nullable SpelExpression condition,
                @Nullable SpelExpression key, @Nullable SpelExpression plan, @Nullable CountOn countOn,
                boolean usesIp, RateLimiter limiter) {

        boolean matches(String method, PathContainer path) {
            return (methods.isEmpty() || methods.contains(method)) && pattern.matches(path);
        }
    }

    /**
     * The response statuses a rule counts its requests by: single codes ({@code 401}) and
     * classes ({@code 4xx}, all of 400 to 499).
     *
     * @param codes   the single codes
     * @param classes the classes, by their first digit
     */
    record CountOn(Set<Integer> codes, Set<Integer> classes) {

        /** Whether a request answered with this status counts. */
        boolean counts(int status) {
            return codes.contains(status) || classes.contains(status / 100);
        }
    }

    private Rule parse(String property, String name, SluiceProperties.Rule rule, LimitOverrides overrides) {
        if (rule.getPath() == null || rule.getPath().isBlank()) {
            throw new SluiceConfigurationException(property + " (" + name + ") has no path", "Set " + property
                    + ".path to a path pattern, such as /v1/organizations/{orgId}/product/**.", null);
        }
        PathPattern pattern = ConfiguredRules.pattern(paths, property, name, rule.getPath(),
                "/v1/organizations/{orgId}/product/**");
        Set<String> methods = ConfiguredRules.methods(property, name, rule.getMethods());
        if (methods.contains("GET")) {
            // Spring answers HEAD with the GET handler: it runs as often.
            methods.add("HEAD");
        }
        if (rule.getTiers().isEmpty()) {
            throw new SluiceConfigurationException(property + " (" + name + ") has no tiers", "Give it at least one"
                    + " tier: " + property + ".tiers[0].limit and " + property + ".tiers[0].window.", null);
        }
        if (overrides.tiers(name).isPresent()) {
            throw new SluiceConfigurationException("sluice.limits." + name + ".tiers configure the tiers of rule '"
                    + name + "', which has its own", "Set the tiers in " + property + ".tiers; sluice.limits."
                    + name + " may give the rule's plans.", null);
        }
        if (overrides.condition(name).isPresent()) {
            throw new SluiceConfigurationException("sluice.limits." + name + ".condition configures the condition of"
                    + " rule '" + name + "', which has its own", "Set the condition in " + property + ".condition;"
                    + " sluice.limits." + name + " may give the rule's plans.", null);
        }
        List<Tier> tiers = PropertiesLimitOverrides.tiers(property + ".tiers", rule.getTiers());
        SpelExpression condition = expressions.parse(property + ".condition", name, rule.getCondition());
        SpelExpression key = expressions.parse(property + ".key", name, rule.getKey());
        SpelExpression plan = expressions.parse(property + ".plan", name, rule.getPlan());
        CountOn countOn = countOn(property + ".count-on", name, rule.getCountOn());
        RateLimiter limiter;
        try {
            limiter = registry.register(new LimitDefinition(name, rule.getKey(), tiers, "1", OnLimit.REJECT,
                    Duration.ZERO, "", null, null, rule.getPlan(), overrides.plans(name)));
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(property + " (" + name + ") cannot be built: " + e.getMessage(),
                    "Give the rule a name no other limiter has, and tiers its store supports.", e);
        }
        if (countOn != null && !limiter.givesBack()) {
            throw new SluiceConfigurationException(property + ".count-on (" + name + ") needs a store that can give"
                    + " permits back, and " + storeName(limiter.store()) + " cannot for the rule's tiers",
                    "Remove " + property + ".count-on to count every request, or use a store that gives permits"
                    + " back (sluice.store=memory or redis).", null);
        }
        boolean usesIp = usesIp(condition) || usesIp(key) || usesIp(plan);
        return new Rule(name, pattern, Set.copyOf(methods), condition, key, plan, countOn, usesIp, limiter);
    }

    /** The class of the store beneath any decorators, by its simple name unless it has none. */
    private static String storeName(RateLimitStore store) {
        RateLimitStore beneath = ForwardingRateLimitStore.beneath(store);
        String name = beneath.getClass().getSimpleName();
        return name.isEmpty() ? beneath.getClass().getName() : name;
    }

    private static boolean usesIp(@Nullable SpelExpression expression) {
        return expression != null && RateLimitVariables.referencedBy(expression).contains("ip");
    }

    /** The statuses of {@code count-on}; {@code null} when there are none, to count every request. */
    private static @Nullable CountOn countOn(String property, String name, List<String> configured) {
        Set<Integer> codes = new HashSet<>();
        Set<Integer> classes = new HashSet<>();
        for (String status : configured) {
            String trimmed = status.trim().toLowerCase(Locale.ROOT);
            if (trimmed.matches("[1-5][0-9][0-9]")) {
                codes.add(Integer.parseInt(trimmed));
            } else if (trimmed.matches("[1-5]xx")) {
                classes.add(trimmed.charAt(0) - '0');
            } else {
                throw new SluiceConfigurationException(property + " (" + name + ") has '" + status.trim()
                        + "', which is not an HTTP status", "List response statuses from 100 to 599 (401) or classes"
                        + " of them (4xx), such as count-on: 401, 403.", null);
            }
        }
        return codes.isEmpty() && classes.isEmpty() ? null : new CountOn(Set.copyOf(codes), Set.copyOf(classes));
    }

    /** The rules matching a request's method and path within the application, in their order. */
    public List<Rule> matching(String method, PathContainer path) {
        return ConfiguredRules.matching(rules, rule -> rule.matches(method, path));
    }

    /** The rules, in their order. */
    public List<Rule> rules() {
        return rules;
    }

    /**
     * The key and plan of a request under a rule, as its expressions give them; {@code null} when
     * the rule lets the request through without counting it: its condition is {@code false}, or
     * the key cannot be worked out under {@link KeyErrorPolicy#SKIP}.
     *
     * @throws RateLimitKeyException when the condition or the key cannot be worked out under
     *         {@link KeyErrorPolicy#REJECT}
     */
    public @Nullable Call call(Rule rule, PathContainer path, Supplier<@Nullable String> ip, Object request) {
        StandardEvaluationContext context = null;
        if (rule.condition != null || rule.key != null || rule.plan != null) {
            Map<String, @Nullable Object> values = new HashMap<>();
            // Resolving the client address reads forwarding headers: only when an expression wants it.
            values.put("ip", rule.usesIp ? ip.get() : null);
            values.put("request", request);
            values.put("path", variables(rule, path));
            context = expressions.context(values);
        }
        try {
            if (rule.condition != null && !RuleExpressions.condition(rule.name, rule.condition, context)) {
                return null;
            }
            return new Call(RuleExpressions.value(rule.name, "key", rule.key, context, ""),
                    RuleExpressions.value(rule.name, "plan", rule.plan, context, null));
        } catch (RateLimitKeyException error) {
            return ConfiguredRules.afterKeyError(registry, rule.limiter, error, onKeyError, new Call("(key error)", null));
        }
    }

    /** What one request is counted as under a rule. */
    public record Call(String key, @Nullable String plan) {
    }

    /**
     * A permit a request took under a rule that counts requests by their outcome, or that holds
     * permits while requests run: given back once the response's status is known, unless the rule
     * counts that status, and released once the request ends.
     *
     * @param admittedAt when it was taken, by the limiter's clock
     */
    public record Taken(Rule rule, Call call, Instant admittedAt) {
    }

    /**
     * The permit a request just took under a rule, if the rule counts requests by their outcome
     * or holds permits while they run.
     *
     * @return the permit, or {@code null} for a rule counting every request, holding nothing
     */
    public @Nullable Taken taken(Rule rule, Call call) {
        // Read after the decision: a sliding log gives back an entry made no later than this.
        return rule.countOn == null && !rule.limiter.holdsPermits() ? null
                : new Taken(rule, call, registry.clock().instant());
    }

    /**
     * Ends a request: {@linkplain #giveBack gives back} the permits its status does not count,
     * and {@linkplain #release releases} those it held.
     *
     * @param taken  the request's permits
     * @param status its response's status
     */
    public void end(List<Taken> taken, int status) {
        giveBack(taken, status);
        release(taken);
    }

    /**
     * Gives back, without waiting, the permits a request took under rules that do not count its
     * response's status. Never fails: a permit that cannot be given back stays taken, and the
     * first such failure of each rule is logged.
     *
     * @param taken  the request's permits
     * @param status its response's status
     */
    public void giveBack(List<Taken> taken, int status) {
        for (Taken permit : taken) {
            Rule rule = permit.rule;
            if (rule.countOn != null && !rule.countOn.counts(status)) {
                settle(rule, "give back the permit of a request answered " + status + ", which stays counted",
                        () -> rule.limiter.giveBackAsync(permit.call.key(), 1, permit.call.plan(), permit.admittedAt));
            }
        }
    }

    /**
     * Releases, without waiting, the permits a request that ended held under rules with a
     * concurrency tier. Never fails: a permit that cannot be released is left to its lease, where
     * the store keeps one, and the first such failure of each rule is logged.
     *
     * @param taken the request's permits
     */
    public void release(List<Taken> taken) {
        for (Taken permit : taken) {
            Rule rule = permit.rule;
            if (rule.limiter.holdsPermits()) {
                settle(rule, "release the permit of a request that ended",
                        () -> rule.limiter.releaseAsync(permit.call.key(), 1, permit.call.plan(), permit.admittedAt));
            }
        }
    }

    private void settle(Rule rule, String operation, Supplier<CompletionStage<Void>> call) {
        CompletionStage<Void> done;
        try {
            done = call.get();
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((ignored, failure) -> {
            if (failure != null) {
                // The store's message may quote the key, which no log line shows.
                System.Logger.Level level = warnedGiveBacks.add(rule.name) ? System.Logger.Level.WARNING
                        : System.Logger.Level.DEBUG;
                LOGGER.log(level, "Rate limit rule '" + rule.name + "' could not " + operation + ": "
                        + failure.getClass().getName());
            }
        });
    }

    private static Map<String, String> variables(Rule rule, PathContainer path) {
        PathPattern.PathMatchInfo match = rule.pattern.matchAndExtract(path);
        return match == null ? Map.of() : match.getUriVariables();
    }

}
