package dev.sluice.boot.client;

import dev.sluice.LimitDefinition;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.aop.LimitOverrides;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.autoconfigure.PropertiesLimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.ConfiguredRules;
import dev.sluice.boot.web.RuleExpressions;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The limiters of {@code sluice.client.rules}: each rule, checked when the application starts
 * and registered as a limiter of its name, limits the outbound requests whose host, path and
 * method it matches. Independent of the HTTP client: the interceptor of {@code RestClient} and
 * {@code RestTemplate} and the filter of {@code WebClient} hand it each request's method and URI,
 * and what the partner answered.
 *
 * <p>A request takes its permit when it is about to be sent, after every other interceptor, so
 * that nothing the application does before sending counts against the partner's window. The
 * partner counts the request when it arrives, which is some time between sending and its answer;
 * so once the answer is in, the permit is {@linkplain RateLimiter#recount counted again} from
 * then: a sliding log then keeps at most its limit within any window of the partner's arrivals,
 * whatever the time the requests travel, as long as answers come back within the window.
 *
 * <p>With {@code adapt} (the default), the partner's answers drive the limit ({@link PartnerAnswer}):
 * <ul>
 *   <li>A pause it asks for ({@code Retry-After} on a 429 or 503, or {@code RateLimit} or
 *       {@code X-RateLimit-Remaining} saying nothing is left until a reset) pauses the request's
 *       key in the store, so that no instance sharing the store sends the partner anything
 *       until then. Waiting requests wait through the pause, within their {@code max-wait};
 *       others fail with the time left as their {@code retryAfter}. A pause is never longer than
 *       {@code sluice.client.max-pause}.</li>
 *   <li>A quota it states ({@code RateLimit-Policy}, {@code X-RateLimit-Limit}) lower than the
 *       rule's tier of the same window replaces that tier's limit until the partner states
 *       another; a quota of a window no tier has is added as a sliding log. A quota is never
 *       raised above the configured one. {@code X-RateLimit-Limit}, which gives no window, is
 *       taken for the rule's first tier. Quotas change the rule's default tiers, which all of
 *       its keys share; plans keep theirs.</li>
 * </ul>
 * Values that are malformed, negative, too large or contradictory are ignored, logged at debug
 * level and counted; nothing the partner sends makes a request fail.
 */
final class ClientRateLimitRules {

    private static final System.Logger LOGGER = System.getLogger(ClientRateLimitRules.class.getName());

    private final List<Rule> rules;
    private final KeyErrorPolicy onKeyError;
    private final RateLimiterRegistry registry;
    private final RuleExpressions expressions;
    private final Duration maxPause;
    private final PartnerSignals signals;
    /** Tells the instances sharing the store that a rule paused a key, by the rule's name. */
    private final Consumer<String> paused;
    /** The rules whose failed store operations were logged: each is logged once, as a warning. */
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /**
     * @param maxPause the longest pause a partner's answer may cause
     * @param beans    resolves {@code @name} in expressions, or {@code null} for none
     * @param signals  hears the partners' signals
     * @param paused   tells the instances sharing the store that a rule paused a key, by the rule's name
     */
    ClientRateLimitRules(List<SluiceProperties.ClientRule> configured, Duration maxPause,
                         LimitOverrides overrides, RateLimiterRegistry registry, KeyErrorPolicy onKeyError,
                         @Nullable BeanResolver beans, PartnerSignals signals, Consumer<String> paused) {
        if (maxPause.isNegative() || maxPause.isZero()) {
            throw new SluiceConfigurationException("sluice.client.max-pause is " + maxPause + ", not a positive"
                    + " duration", "Set it to the longest a partner may pause calls, such as 1h.", null);
        }
        this.registry = registry;
        this.onKeyError = onKeyError;
        this.maxPause = maxPause;
        this.signals = signals;
        this.paused = paused;
        this.expressions = new RuleExpressions(Set.of("request", "host", "path"), "#request (the outbound request),"
                + " #host (its host) or #path (the path's variables: #path['symbol'])", beans);
        this.rules = ConfiguredRules.parse("sluice.client.rules", configured, SluiceProperties.ClientRule::getName,
                "metrics and the actuator endpoint", name -> !overrides.enabled(name),
                (property, name, rule) -> parse(property, name, rule, overrides));
    }

    /**
     * One rule, as it limits requests.
     *
     * @param host    the host, lower case
     * @param port    the port, or -1 for any
     * @param adapted how the partner's answers change the rule, or {@code null} without {@code adapt}
     */
    record Rule(String name, String host, int port, PathPattern pattern, Set<String> methods,
                @Nullable SpelExpression key, @Nullable SpelExpression plan, RateLimiter limiter,
                boolean recounts, @Nullable PartnerQuotas adapted) {

        boolean matches(String method, URI uri) {
            return (methods.isEmpty() || methods.contains(method)) && host.equalsIgnoreCase(uri.getHost())
                    && (port < 0 || port == port(uri)) && pattern.matches(path(uri));
        }

        private static int port(URI uri) {
            if (uri.getPort() >= 0) {
                return uri.getPort();
            }
            return "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
        }
    }

    private static PathContainer path(URI uri) {
        String raw = uri.getRawPath();
        return PathContainer.parsePath(raw == null || raw.isEmpty() ? "/" : raw);
    }

    private Rule parse(String property, String name, SluiceProperties.ClientRule rule,
                       LimitOverrides overrides) {
        String configuredHost = rule.getHost();
        if (configuredHost == null || configuredHost.isBlank()) {
            throw new SluiceConfigurationException(property + " (" + name + ") has no host", "Set " + property
                    + ".host to the partner's host, with a port if it matters: api.partner.com or localhost:8080.",
                    null);
        }
        URI authority;
        try {
            authority = new URI("http://" + configuredHost.trim());
        } catch (URISyntaxException e) {
            authority = null;
        }
        if (authority == null || authority.getHost() == null || (authority.getRawPath() != null
                && !authority.getRawPath().isEmpty()) || authority.getRawUserInfo() != null) {
            throw new SluiceConfigurationException(property + ".host (" + name + ") '" + configuredHost
                    + "' is not a host with an optional port", "Write the host alone, such as api.partner.com or"
                    + " localhost:8080; the path goes in " + property + ".path.", null);
        }
        PathPattern pattern = ConfiguredRules.pattern(PathPatternParser.defaultInstance, property, name,
                rule.getPath(), "/v1/quotes/{symbol} or /v1/**");
        Set<String> methods = ConfiguredRules.methods(property, name, rule.getMethods());
        if (rule.getTiers().isEmpty()) {
            throw new SluiceConfigurationException(property + " (" + name + ") has no tiers", "Give it the partner's"
                    + " limit as a tier: " + property + ".tiers[0].limit and " + property + ".tiers[0].window.", null);
        }
        if (overrides.tiers(name).isPresent() || overrides.condition(name).isPresent()) {
            throw new SluiceConfigurationException("sluice.limits." + name + " configures the tiers or condition of"
                    + " client rule '" + name + "', which has its own", "Set the tiers in " + property + ".tiers;"
                    + " sluice.limits." + name + " may give the rule's plans.", null);
        }
        List<Tier> tiers = PropertiesLimitOverrides.tiers(property + ".tiers", rule.getTiers(), Algorithm.SLIDING_LOG);
        SpelExpression key = expressions.parse(property + ".key", name, rule.getKey());
        SpelExpression plan = expressions.parse(property + ".plan", name, rule.getPlan());
        Duration maxWait = rule.getOnLimit() == OnLimit.WAIT ? rule.getMaxWait() : Duration.ZERO;
        RateLimiter limiter;
        try {
            limiter = registry.register(new LimitDefinition(name, rule.getKey(), tiers, "1", rule.getOnLimit(),
                    maxWait, "", null, null, rule.getPlan(), overrides.plans(name)));
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(property + " (" + name + ") cannot be built: " + e.getMessage(),
                    "Give the rule a name no other limiter has, tiers its store supports, and with on-limit: wait"
                    + " a positive max-wait.", e);
        }
        PartnerQuotas adapted = null;
        if (rule.isAdapt()) {
            adapted = new PartnerQuotas(name, limiter, maxPause);
            if (!limiter.pauses()) {
                LOGGER.log(System.Logger.Level.WARNING, "Client rule '" + name + "' cannot pause its calls when the"
                        + " partner asks to: its store cannot hold pauses. Quotas the partner states still apply.");
            }
        }
        return new Rule(name, authority.getHost().toLowerCase(Locale.ROOT), authority.getPort(), pattern,
                Set.copyOf(methods), key, plan, limiter, limiter.recounts(), adapted);
    }

    /** The rules, in their order. */
    List<Rule> rules() {
        return rules;
    }

    /** The rules matching a request's method and URI, in their order. */
    List<Rule> matching(String method, URI uri) {
        return ConfiguredRules.matching(rules, rule -> rule.matches(method, uri));
    }

    /**
     * A permit one request holds under one rule.
     *
     * @param admittedAt when it was taken, by the registry's clock
     */
    record Permit(Rule rule, String key, @Nullable String plan, Instant admittedAt) {
    }

    /**
     * Takes the request's permits under the rules it matches, in their order, each as its rule's
     * {@code on-limit} says, blocking the calling thread while it waits.
     *
     * @param request the request, for the expressions' {@code #request}
     * @return the permits, one per rule that counted the request
     * @throws dev.sluice.RateLimitExceededException when a rule refuses the request; the permits
     *         of the rules before it stay taken, as the partner may still be called, but those
     *         held while requests run are released
     */
    List<Permit> admit(List<Rule> matched, URI uri, Object request) {
        List<Permit> permits = new ArrayList<>(matched.size());
        try {
            for (Rule rule : matched) {
                lapse(rule);
                Call call = call(rule, uri, request);
                if (call != null) {
                    rule.limiter.acquire(call.key, 1, call.plan);
                    permits.add(new Permit(rule, call.key, call.plan, registry.clock().instant()));
                }
            }
        } catch (RuntimeException refused) {
            release(permits);
            throw refused;
        }
        return permits;
    }

    /**
     * Takes the request's permits as {@link #admit} does, without blocking: waits run on timers.
     * Cancelling the future it returns takes the request out of the line it waits in, and gives
     * back the permits it took, where the store can: nothing is sent.
     *
     * @return a future completing with the permits, or failing with the first rejection
     */
    CompletableFuture<List<Permit>> admitAsync(List<Rule> matched, URI uri, Object request) {
        CompletableFuture<List<Permit>> admitted = new CompletableFuture<>();
        List<Permit> taken = new ArrayList<>(matched.size());
        // The wait of the rule in hand, cancelled with the request's.
        AtomicReference<CompletableFuture<?>> waiting = new AtomicReference<>(CompletableFuture.completedFuture(null));
        admitted.whenComplete((permits, failure) -> {
            if (admitted.isCancelled()) {
                waiting.get().cancel(false);
            }
        });
        admitFrom(0, matched, uri, request, taken, waiting, admitted);
        return admitted;
    }

    /** Takes the permit of {@code matched[index]} and those after it, then completes {@code admitted}. */
    private void admitFrom(int index, List<Rule> matched, URI uri, Object request, List<Permit> taken,
                           AtomicReference<CompletableFuture<?>> waiting, CompletableFuture<List<Permit>> admitted) {
        if (admitted.isCancelled()) {
            giveBack(taken);
            return;
        }
        if (index == matched.size()) {
            if (!admitted.complete(taken)) {
                giveBack(taken);
            }
            return;
        }
        Rule rule = matched.get(index);
        lapse(rule);
        Call call;
        try {
            call = call(rule, uri, request);
        } catch (RuntimeException e) {
            admitted.completeExceptionally(e);
            return;
        }
        if (call == null) {
            admitFrom(index + 1, matched, uri, request, taken, waiting, admitted);
            return;
        }
        CompletableFuture<?> wait = rule.limiter.acquireAsync(call.key, 1, call.plan).toCompletableFuture();
        waiting.set(wait);
        if (admitted.isCancelled()) {
            wait.cancel(false);
        }
        wait.whenComplete((decision, failure) -> {
            if (failure != null) {
                if (!admitted.completeExceptionally(failure) && admitted.isCancelled()) {
                    giveBack(taken);
                } else {
                    release(taken);
                }
                return;
            }
            taken.add(new Permit(rule, call.key, call.plan, registry.clock().instant()));
            admitFrom(index + 1, matched, uri, request, taken, waiting, admitted);
        });
    }

    /** Gives back the permits of a request that will not be sent, where their stores can, and releases those held. */
    private void giveBack(List<Permit> permits) {
        for (Permit permit : permits) {
            if (permit.rule.limiter.givesBack()) {
                quietly(permit.rule, "give back the permit of a cancelled request",
                        () -> permit.rule.limiter.giveBackAsync(permit.key, 1, permit.plan, permit.admittedAt));
            }
        }
        release(permits);
    }

    /** Releases the permits a request held under rules with a concurrency tier, once it has ended. */
    private List<CompletableFuture<Void>> release(List<Permit> permits) {
        List<CompletableFuture<Void>> released = new ArrayList<>(permits.size());
        for (Permit permit : permits) {
            if (permit.rule.limiter.holdsPermits()) {
                released.add(quietly(permit.rule, "release the permit of a request that ended",
                        () -> permit.rule.limiter.releaseAsync(permit.key, 1, permit.plan, permit.admittedAt)));
            }
        }
        return released;
    }

    /** Goes back to a rule's tiers once the quotas its partner stated have lapsed. */
    private void lapse(Rule rule) {
        if (rule.adapted != null) {
            rule.adapted.lapse(registry.clock().instant());
        }
    }

    /**
     * The partner answered a request: each permit is counted again from now, those held while
     * requests run are released, and with
     * {@code adapt} the answer's pause and quotas are applied. The caller hands the answer on
     * once the stage completes, so that the next request of the same caller finds the store
     * changed; the store's own timeout bounds the wait.
     *
     * @param permits the request's permits
     * @param status  the answer's status code
     * @param headers the answer's headers
     * @return a stage completing once the store has the changes, or failed to take them; it never fails
     */
    CompletableFuture<Void> answered(List<Permit> permits, int status, HttpHeaders headers) {
        List<CompletableFuture<Void>> changes = new ArrayList<>(recount(permits));
        changes.addAll(release(permits));
        PartnerAnswer answer = null;
        for (Permit permit : permits) {
            Rule rule = permit.rule;
            if (rule.adapted == null) {
                continue;
            }
            if (answer == null) {
                answer = PartnerAnswer.read(status, headers, registry.clock().instant(), maxPause);
            }
            changes.add(adapt(permit, answer));
        }
        return CompletableFuture.allOf(changes.toArray(CompletableFuture[]::new));
    }

    /**
     * A request was sent but brought no answer (an I/O error, a timeout, a cancellation): it may
     * have reached the partner, so each permit is counted again from now, as for an answer, and
     * those held are released.
     *
     * @param permits the request's permits
     */
    void unanswered(List<Permit> permits) {
        recount(permits);
        release(permits);
    }

    private List<CompletableFuture<Void>> recount(List<Permit> permits) {
        List<CompletableFuture<Void>> recounts = new ArrayList<>(permits.size());
        for (Permit permit : permits) {
            if (permit.rule.recounts) {
                recounts.add(quietly(permit.rule, "count again the permit of a request",
                        () -> permit.rule.limiter.recountAsync(permit.key, 1, permit.plan, permit.admittedAt)));
            }
        }
        return recounts;
    }

    /** Applies what the partner said under one permit's rule; the stage completes once a pause is recorded. */
    private CompletableFuture<Void> adapt(Permit permit, PartnerAnswer answer) {
        Rule rule = permit.rule;
        for (String ignored : answer.ignored()) {
            LOGGER.log(System.Logger.Level.DEBUG, "Client rule '" + rule.name + "' ignored part of the partner's"
                    + " answer: " + ignored);
            signals.heard(rule.name, "ignored");
        }
        if (rule.adapted.stated(answer.quotas(), registry.clock().instant())) {
            signals.heard(rule.name, "quota");
        }
        Duration pause = answer.pause();
        if (pause == null || !rule.limiter.pauses()) {
            return CompletableFuture.completedFuture(null);
        }
        LOGGER.log(System.Logger.Level.DEBUG, "Client rule '" + rule.name + "' pauses for " + pause
                + ", as the partner asked");
        signals.heard(rule.name, "pause");
        return quietly(rule, "pause as the partner asked",
                () -> rule.limiter.pauseAsync(permit.key, permit.plan, pause).thenRun(() -> paused.accept(rule.name)));
    }

    /**
     * Runs a store operation whose failure leaves things as they were, logging the first failure
     * of each rule; the stage completes when the operation does, and never fails.
     */
    private CompletableFuture<Void> quietly(Rule rule, String what, Supplier<CompletionStage<Void>> operation) {
        CompletionStage<Void> done;
        try {
            done = operation.get();
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        return done.toCompletableFuture().handle((ignored, failure) -> {
            if (failure != null) {
                // The store's message may quote the key, which no log line shows.
                System.Logger.Level level = warned.add(rule.name) ? System.Logger.Level.WARNING
                        : System.Logger.Level.DEBUG;
                LOGGER.log(level, "Client rule '" + rule.name + "' could not " + what + ": "
                        + failure.getClass().getName());
            }
            return null;
        });
    }

    /** What one request is counted as under a rule. */
    private record Call(String key, @Nullable String plan) {
    }

    /**
     * The key and plan of a request under a rule; {@code null} when the key cannot be worked out
     * under {@link KeyErrorPolicy#SKIP}.
     *
     * @throws RateLimitKeyException when the key cannot be worked out under {@link KeyErrorPolicy#REJECT}
     */
    private @Nullable Call call(Rule rule, URI uri, Object request) {
        if (rule.key == null && rule.plan == null) {
            return new Call("", null);
        }
        Map<String, @Nullable Object> values = new HashMap<>();
        values.put("request", request);
        values.put("host", uri.getHost());
        PathPattern.PathMatchInfo match = rule.pattern.matchAndExtract(path(uri));
        values.put("path", match == null ? Map.of() : match.getUriVariables());
        StandardEvaluationContext context = expressions.context(values);
        try {
            return new Call(RuleExpressions.value(rule.name, "key", rule.key, context, ""),
                    RuleExpressions.value(rule.name, "plan", rule.plan, context, null));
        } catch (RateLimitKeyException error) {
            return ConfiguredRules.afterKeyError(registry, rule.limiter, error, onKeyError, new Call("(key error)", null));
        }
    }

    /**
     * The quotas a rule's partner states, applied to the rule's default tiers: a stated quota
     * lower than the tier of its window replaces that tier's limit, one of a window no tier has
     * is added as a sliding log; nothing is ever raised above what the rule had before. The tiers
     * it starts from are the rule's, or those set since by anyone else (a refresh, the actuator).
     * Quotas lapse {@code sluice.client.max-pause} after the partner last stated them: a partner
     * that stops saying so (or is not asked, its quota refusing every call here) no longer holds
     * the rule.
     */
    static final class PartnerQuotas {

        private final String rule;
        private final RateLimiter limiter;
        private final Duration lasting;
        /** The tiers the partner's quotas apply to. */
        private List<Tier> configured;
        /** The tiers last set here; tiers found different were set by someone else. */
        private List<Tier> applied;
        private List<PartnerAnswer.Quota> stated = List.of();
        /** When the quotas last stated lapse, unless stated again; read without the lock. */
        private volatile @Nullable Instant lapsesAt;

        PartnerQuotas(String rule, RateLimiter limiter, Duration lasting) {
            this.rule = rule;
            this.limiter = limiter;
            this.lasting = lasting;
            this.configured = limiter.tiers();
            this.applied = configured;
        }

        /**
         * The rule's own tiers: those the partner's quotas apply to, or, when someone else has
         * set the tiers since, those.
         */
        synchronized List<Tier> ownTiers() {
            List<Tier> current = limiter.tiers();
            return current.equals(applied) ? configured : current;
        }

        /**
         * The quotas of one answer; no quota keeps the last stated, until they lapse.
         *
         * @param now the registry's clock
         * @return whether the rule's tiers changed
         */
        synchronized boolean stated(List<PartnerAnswer.Quota> quotas, Instant now) {
            List<Tier> current = limiter.tiers();
            if (!current.equals(applied)) {
                configured = current;
                applied = current;
                stated = List.of();
            }
            if (quotas.isEmpty()) {
                return false;
            }
            lapsesAt = now.plus(lasting);
            if (quotas.equals(stated)) {
                return false;
            }
            stated = List.copyOf(quotas);
            List<Tier> target = adapted(configured, quotas);
            if (target.equals(current)) {
                return false;
            }
            try {
                limiter.changeTiers(target);
            } catch (IllegalArgumentException e) {
                LOGGER.log(System.Logger.Level.DEBUG, "Client rule '" + rule + "' cannot take the partner's"
                        + " quotas " + quotas + ": " + e.getMessage());
                return false;
            }
            applied = target;
            LOGGER.log(System.Logger.Level.INFO, target.equals(configured)
                    ? "Client rule '" + rule + "' is back to its configured tiers " + configured
                    + ": the partner states no lower quota"
                    : "Client rule '" + rule + "' follows the quota its partner states, " + quotas + ", with tiers "
                    + target + " instead of " + configured + " until the partner states another");
            return true;
        }

        /**
         * Goes back to the tiers the quotas applied to once they have lapsed, unless someone else
         * has set the tiers since.
         *
         * @param now the registry's clock
         */
        void lapse(Instant now) {
            Instant lapses = lapsesAt;
            if (lapses == null || now.isBefore(lapses)) {
                return;
            }
            synchronized (this) {
                if (lapsesAt != lapses) {
                    return;
                }
                lapsesAt = null;
                stated = List.of();
                if (!limiter.tiers().equals(applied) || applied.equals(configured)) {
                    return;
                }
                limiter.changeTiers(configured);
                applied = configured;
                LOGGER.log(System.Logger.Level.INFO, "Client rule '" + rule + "' is back to its configured tiers "
                        + configured + ": its partner has not stated its quota for " + lasting);
            }
        }

        private static List<Tier> adapted(List<Tier> configured, List<PartnerAnswer.Quota> quotas) {
            List<Tier> tiers = new ArrayList<>(configured);
            for (PartnerAnswer.Quota quota : quotas) {
                Duration window = quota.window() != null ? quota.window() : tiers.get(0).window();
                int same = -1;
                for (int i = 0; i < tiers.size(); i++) {
                    if (tiers.get(i).window().equals(window)) {
                        same = i;
                        break;
                    }
                }
                try {
                    if (same < 0) {
                        tiers.add(Tier.of(quota.limit(), window, Algorithm.SLIDING_LOG));
                    } else if (tiers.get(same).limit() > quota.limit()) {
                        Tier tier = tiers.get(same);
                        tiers.set(same, new Tier(quota.limit(), window, tier.algorithm(), tier.countRejected(),
                                tier.blockFor()));
                    }
                } catch (IllegalArgumentException e) {
                    // A quota no tier can hold (too large for its window): the configured tiers hold.
                    LOGGER.log(System.Logger.Level.DEBUG, "A partner's quota " + quota + " cannot be a tier: "
                            + e.getMessage());
                }
            }
            return List.copyOf(tiers);
        }
    }
}
