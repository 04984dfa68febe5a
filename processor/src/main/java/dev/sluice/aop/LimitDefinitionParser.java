package dev.sluice.aop;

import dev.sluice.LimitDefinition;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import dev.sluice.annotation.RateLimits;
import dev.sluice.aop.Expressions.MethodExpression;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.annotation.RepeatableContainers;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringValueResolver;

/**
 * Turns the {@code @RateLimited} annotations of a method (or, failing those, of its class)
 * into validated {@link LimitDefinition}s, one per limiter: annotations sharing a name and key
 * are the tiers of one limiter.
 */
final class LimitDefinitionParser {

    private static final Pattern WHOLE_NUMBER = Pattern.compile("[+-]?\\d+");
    private static final RepeatableContainers REPEATABLE =
            RepeatableContainers.standardRepeatables();
    private static final String DURATION_FORMATS = "use a whole number with a unit (500ms, 2s, 1m, 1h, 1d) or ISO-8601 (PT10S)";

    private final StringValueResolver placeholders;
    private final LimitOverrides overrides;
    private final Expressions expressions;

    LimitDefinitionParser(StringValueResolver placeholders, LimitOverrides overrides, Expressions expressions) {
        this.placeholders = placeholders;
        this.overrides = overrides;
        this.expressions = expressions;
    }

    /**
     * A limiter as parsed: its definition, its parsed expressions, which of its calls count
     * ({@code condition}, {@code unless}, {@code countOn}) and its fallback.
     */
    record ParsedLimit(LimitDefinition definition, @Nullable MethodExpression key, @Nullable MethodExpression cost,
                       @Nullable MethodExpression plan, long fixedCost, boolean defaultName,
                       @Nullable MethodExpression condition, @Nullable MethodExpression unless,
                       List<Class<? extends Throwable>> countOn, @Nullable Fallback fallback) {

        /** Whether the limiter's calls count by their outcome, giving back the permits of some. */
        boolean countsByOutcome() {
            return unless != null || !countOn.isEmpty();
        }
    }

    /** Whether a class carries {@code @RateLimited} anywhere, so that it is worth inspecting. */
    static boolean isCandidate(Class<?> type) {
        return AnnotationUtils.isCandidateClass(type,
                Set.of(RateLimited.class, RateLimits.class));
    }

    /**
     * The limits of a method: its own {@code @RateLimited} annotations or, for a public method
     * without any, those of the class declaring it; either directly or through one composed
     * annotation. These are exactly the places the aspect's pointcut matches.
     */
    List<ParsedLimit> parse(Method method, Class<?> targetClass) {
        List<RateLimited> annotations = declaredOn(method, method);
        if (annotations.isEmpty() && Modifier.isPublic(method.getModifiers())) {
            annotations = declaredOn(method, method.getDeclaringClass());
        }
        if (annotations.isEmpty()) {
            return List.of();
        }
        List<String> keys = annotations.stream().map(RateLimited::key).distinct().toList();
        Map<String, List<RateLimited>> groups = new LinkedHashMap<>();
        Map<String, String> keyByName = new LinkedHashMap<>();
        for (RateLimited annotation : annotations) {
            // The keys of one method are numbered in the order they come: a name that a URL path and a header carry
            // as it is, and that does not publish the key expression.
            String name = !annotation.name().isEmpty() ? resolve(method, "name", annotation.name())
                    : defaultName(method, targetClass) + (keys.size() > 1 ? "-" + (keys.indexOf(annotation.key()) + 1)
                    : "");
            if (name.isBlank()) {
                throw RateLimitConfigurationException.invalid(method, "name", "is blank after resolving placeholders");
            }
            String previousKey = keyByName.putIfAbsent(name, annotation.key());
            if (previousKey != null && !previousKey.equals(annotation.key())) {
                throw RateLimitConfigurationException.invalid(method, "name", "'" + name + "' is given to tiers with"
                        + " different keys ('" + previousKey + "' and '" + annotation.key() + "'); the tiers of one"
                        + " limiter share one key: give each key its own name");
            }
            groups.computeIfAbsent(name, k -> new ArrayList<>()).add(annotation);
        }
        List<ParsedLimit> limits = new ArrayList<>();
        groups.forEach((name, group) -> {
            if (overrides.enabled(name)) {
                boolean defaultName = group.stream().allMatch(annotation -> annotation.name().isEmpty());
                limits.add(parseLimiter(method, targetClass, name, defaultName, group));
            }
        });
        return limits;
    }

    /**
     * {@code SimpleClassName.method}, with the parameter types when the method is overloaded (an
     * array type as {@code StringArray}, so that no bracket needs escaping in a URL).
     */
    private static String defaultName(Method method, Class<?> targetClass) {
        String name = targetClass.getSimpleName() + "." + method.getName();
        if (overloads(method.getName(), targetClass) > 1) {
            name += Arrays.stream(method.getParameterTypes()).map(type -> type.getSimpleName().replace("[]", "Array"))
                    .collect(Collectors.joining(",", "(", ")"));
        }
        return name;
    }

    /**
     * How many methods of this name a class has, as its source shows them: those it and its
     * superclasses declare, an override counted once with what it overrides, bridge methods
     * not at all. Interfaces are left out, so that implementing one never changes a name.
     */
    private static long overloads(String name, Class<?> targetClass) {
        Set<Method> distinct = new HashSet<>();
        for (Class<?> type = targetClass; type != null; type = type.getSuperclass()) {
            for (Method declared : type.getDeclaredMethods()) {
                if (declared.getName().equals(name) && !declared.isBridge() && !declared.isSynthetic()) {
                    distinct.add(BridgeMethodResolver.findBridgedMethod(
                            ClassUtils.getMostSpecificMethod(declared, targetClass)));
                }
            }
        }
        return distinct.size();
    }

    /** The {@code @RateLimited} annotations on an element, directly or in one composed annotation. */
    private static List<RateLimited> declaredOn(Method method, AnnotatedElement element) {
        List<RateLimited> found = new ArrayList<>();
        MergedAnnotations.from(element, SearchStrategy.DIRECT, REPEATABLE).stream(RateLimited.class)
                .forEach(annotation -> {
                    if (annotation.getDistance() > 1) {
                        throw RateLimitConfigurationException.invalid(method, "@RateLimited", "is reached through "
                                + annotation.getDistance() + " levels of composed annotations on " + element
                                + "; the aspect sees it directly or through one composed annotation");
                    }
                    found.add(annotation.synthesize());
                });
        return found;
    }

    /**
     * Fails for {@code @RateLimited} on an interface of {@code type}: the aspect, like AspectJ,
     * does not inherit annotations from interfaces, so such a limit would never apply.
     */
    static void rejectInterfaceAnnotations(Class<?> type) {
        for (Class<?> implemented : ClassUtils.getAllInterfacesForClassAsSet(type)) {
            for (Method method : implemented.getMethods()) {
                if (!method.isDefault() && !MergedAnnotations.from(method, SearchStrategy.DIRECT, REPEATABLE)
                        .stream(RateLimited.class).toList().isEmpty()) {
                    throw RateLimitConfigurationException.invalid(method, "@RateLimited", "is on an interface"
                            + " method, which " + type.getName() + " implements; limits are read from the class"
                            + " that declares the running method, so this one would never apply: annotate the"
                            + " implementation instead");
                }
            }
        }
    }

    private ParsedLimit parseLimiter(Method method, Class<?> targetClass, String name, boolean defaultName,
                                     List<RateLimited> group) {
        String keyText = group.get(0).key();
        MethodExpression key = keyText.isEmpty() ? null : expressions.parse(method, "key", keyText);

        List<Tier> declared = new ArrayList<>();
        boolean fromConfiguration = false;
        for (RateLimited annotation : group) {
            Tier concurrency = parseConcurrency(method, annotation);
            if (concurrency != null) {
                declared.add(concurrency);
            }
            Tier tier = parseTier(method, annotation, concurrency != null);
            if (tier == null && concurrency == null) {
                fromConfiguration = true;
            } else if (tier != null) {
                declared.add(tier);
            }
        }
        Optional<List<Tier>> configured = overrides.tiers(name);
        if (fromConfiguration && configured.isEmpty()) {
            throw RateLimitConfigurationException.invalid(method, "limit", "and window are left to configuration,"
                    + " but no tiers are configured for limiter '" + name + "': set limit and window on the"
                    + " annotation, or configure the limiter's tiers (Spring Boot: sluice.limits." + name + ".tiers)");
        }
        List<Tier> tiers = configured.orElse(declared);

        OnLimit onLimit = agreed(method, "onLimit", group, RateLimited::onLimit, OnLimit.REJECT);
        Duration maxWait = duration(method, "maxWait", agreed(method, "maxWait", group, RateLimited::maxWait, "0s"));
        String message = resolve(method, "message", agreed(method, "message", group, RateLimited::message, ""));
        FailurePolicy onStoreFailure = atMostOne(method, "onStoreFailure", group, RateLimited::onStoreFailure);
        KeyErrorPolicy onKeyError = atMostOne(method, "onKeyError", group, RateLimited::onKeyError);
        String costText = agreed(method, "cost", group, RateLimited::cost, "1").trim();
        MethodExpression cost = null;
        long fixedCost = 1;
        if (WHOLE_NUMBER.matcher(costText).matches()) {
            fixedCost = Long.parseLong(costText);
            long smallestLimit = tiers.stream().mapToLong(Tier::limit).min().orElse(Long.MAX_VALUE);
            if (fixedCost < 1 || fixedCost > smallestLimit) {
                throw RateLimitConfigurationException.invalid(method, "cost", "must be from 1 to the smallest limit ("
                        + smallestLimit + "), was " + fixedCost);
            }
        } else {
            cost = expressions.parse(method, "cost", costText);
        }
        String planText = agreed(method, "plan", group, RateLimited::plan, "").trim();
        MethodExpression plan = planText.isEmpty() ? null : expressions.parse(method, "plan", planText);
        String conditionText = overrides.condition(name)
                .orElseGet(() -> agreed(method, "condition", group, RateLimited::condition, "")).trim();
        MethodExpression condition = conditionText.isEmpty() ? null
                : expressions.parse(method, "condition", conditionText);
        String unlessText = agreed(method, "unless", group, RateLimited::unless, "").trim();
        MethodExpression unless = unlessText.isEmpty() ? null
                : expressions.parse(method, "unless", unlessText, Expressions.OUTCOME_VARIABLES);
        List<Class<? extends Throwable>> countOn = agreed(method, "countOn", group,
                annotation -> List.of(annotation.countOn()), List.of());
        String fallbackName = agreed(method, "fallbackMethod", group, RateLimited::fallbackMethod, "").trim();
        Fallback fallback = fallbackName.isEmpty() ? null : Fallback.find(method, targetClass, fallbackName);

        try {
            LimitDefinition definition = new LimitDefinition(name, keyText, tiers, costText, onLimit, maxWait, message,
                    onStoreFailure, onKeyError, planText, overrides.plans(name));
            return new ParsedLimit(definition, key, cost, plan, fixedCost, defaultName, condition, unless, countOn,
                    fallback);
        } catch (IllegalArgumentException e) {
            throw RateLimitConfigurationException.invalid(method, "limiter '" + name + "'", "is inconsistent: "
                    + e.getMessage(), e);
        }
    }

    /**
     * The one policy the tiers of a limiter give an array-typed attribute, whose empty default
     * leaves it to the application's default; {@code null} for that default.
     */
    private static <T> @Nullable T atMostOne(Method method, String attribute, List<RateLimited> group,
                                             Function<RateLimited, T[]> policies) {
        for (RateLimited annotation : group) {
            if (policies.apply(annotation).length > 1) {
                throw RateLimitConfigurationException.invalid(method, attribute, "gives "
                        + Arrays.toString(policies.apply(annotation)) + "; give one policy, or none for the default");
            }
        }
        List<T> none = List.of();
        List<T> agreed = agreed(method, attribute, group, annotation -> List.of(policies.apply(annotation)), none);
        return agreed.isEmpty() ? null : agreed.get(0);
    }

    /** The annotation's concurrency tier, or {@code null} when it gives no {@code concurrency}. */
    private @Nullable Tier parseConcurrency(Method method, RateLimited annotation) {
        long concurrency = annotation.concurrency();
        if (concurrency == -1) {
            if (!annotation.lease().isEmpty()) {
                throw RateLimitConfigurationException.invalid(method, "lease", "is given without concurrency; a lease"
                        + " is how long a permit held by a running call survives its holder");
            }
            return null;
        }
        if (concurrency <= 0) {
            throw RateLimitConfigurationException.invalid(method, "concurrency", "must be positive, was "
                    + concurrency);
        }
        Duration lease = annotation.lease().isEmpty() ? Tier.DEFAULT_LEASE
                : duration(method, "lease", annotation.lease());
        try {
            return Tier.concurrency(concurrency, lease);
        } catch (IllegalArgumentException e) {
            throw RateLimitConfigurationException.invalid(method, "lease", "'" + annotation.lease() + "' is out of"
                    + " range: " + e.getMessage(), e);
        }
    }

    /**
     * The annotation's rate tier, or {@code null} when it leaves limit and window to configuration,
     * or gives only a concurrency.
     */
    private @Nullable Tier parseTier(Method method, RateLimited annotation, boolean concurrency) {
        long limit = limit(method, annotation);
        String window = annotation.window();
        if (annotation.algorithm() == Algorithm.CONCURRENCY) {
            throw RateLimitConfigurationException.invalid(method, "algorithm", "is CONCURRENCY; declare a limit on"
                    + " calls running at once with concurrency = N");
        }
        if (limit == -1 && window.isEmpty()) {
            return null;
        }
        if (limit == -1 || window.isEmpty()) {
            throw RateLimitConfigurationException.invalid(method, limit == -1 ? "limit" : "window",
                    "is missing: set both limit and window, or neither to take the tiers from configuration"
                    + (concurrency ? " (or to limit only the calls running at once)" : ""));
        }
        if (limit <= 0) {
            throw RateLimitConfigurationException.invalid(method, "limit", "must be positive, was " + limit);
        }
        Duration length = duration(method, "window", window);
        Duration blockFor = annotation.blockFor().isEmpty() ? Duration.ZERO
                : duration(method, "blockFor", annotation.blockFor());
        try {
            return new Tier(limit, length, annotation.algorithm(), annotation.countRejected(), blockFor);
        } catch (IllegalArgumentException e) {
            throw RateLimitConfigurationException.invalid(method, "tier", limit + " per '" + window + "' is out of"
                    + " range: " + e.getMessage(), e);
        }
    }

    /** {@code limit}, or {@code limitString} with its placeholders resolved; -1 when neither is given. */
    private long limit(Method method, RateLimited annotation) {
        if (annotation.limitString().isEmpty()) {
            return annotation.limit();
        }
        if (annotation.limit() != -1) {
            throw RateLimitConfigurationException.invalid(method, "limitString", "is given with limit ("
                    + annotation.limit() + "); give one of them");
        }
        String resolved = resolve(method, "limitString", annotation.limitString()).trim();
        if (!WHOLE_NUMBER.matcher(resolved).matches()) {
            throw RateLimitConfigurationException.invalid(method, "limitString", "'" + resolved + "' is not a whole"
                    + " number");
        }
        long limit;
        try {
            limit = Long.parseLong(resolved);
        } catch (NumberFormatException e) {
            throw RateLimitConfigurationException.invalid(method, "limitString", "'" + resolved + "' is out of range",
                    e);
        }
        if (limit <= 0) {
            throw RateLimitConfigurationException.invalid(method, "limitString", "must be positive, was " + limit);
        }
        return limit;
    }

    private Duration duration(Method method, String attribute, String text) {
        String resolved = resolve(method, attribute, text);
        Duration duration;
        try {
            duration = DurationFormatterUtils.detectAndParse(resolved.trim());
        } catch (IllegalArgumentException e) {
            throw RateLimitConfigurationException.invalid(method, attribute, "'" + resolved + "' is not a duration: "
                    + DURATION_FORMATS, e);
        }
        if (duration.isNegative()) {
            throw RateLimitConfigurationException.invalid(method, attribute, "'" + resolved + "' is negative");
        }
        return duration;
    }

    private String resolve(Method method, String attribute, String text) {
        try {
            return Objects.requireNonNullElse(placeholders.resolveStringValue(text), "");
        } catch (IllegalArgumentException e) {
            throw RateLimitConfigurationException.invalid(method, attribute, "'" + text + "' has a placeholder that"
                    + " cannot be resolved: " + e.getMessage(), e);
        }
    }

    /** The one value the tiers of a limiter give an attribute; tiers leaving it at its default agree with any. */
    private static <T> T agreed(Method method, String attribute, List<RateLimited> group,
                                Function<RateLimited, T> value, T defaultValue) {
        T agreed = defaultValue;
        for (RateLimited annotation : group) {
            T given = value.apply(annotation);
            if (!given.equals(defaultValue)) {
                if (!agreed.equals(defaultValue) && !agreed.equals(given)) {
                    throw RateLimitConfigurationException.invalid(method, attribute, "differs between tiers of one"
                            + " limiter ('" + agreed + "' and '" + given + "'); it applies to the whole limiter,"
                            + " so give it once");
                }
                agreed = given;
            }
        }
        return agreed;
    }
}
