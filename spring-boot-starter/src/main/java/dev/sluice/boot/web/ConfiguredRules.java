package dev.sluice.boot.web;

import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * What the rules of {@code sluice.http.rules} and {@code sluice.client.rules} check and do
 * alike: names, methods and path patterns when the application starts, and per request the
 * rules that match and what a key that cannot be worked out does.
 *
 * <p>Public for the client rules, in their own package.
 */
public final class ConfiguredRules {

    private ConfiguredRules() {
    }

    /** Parses one configured rule, named and enabled. */
    @FunctionalInterface
    public interface Parser<P, R> {

        /**
         * @param property the rule's property: {@code sluice.http.rules[0]}
         * @param name     its name
         * @param rule     its settings
         * @return the rule, checked
         */
        R parse(String property, String name, P rule);
    }

    /**
     * The enabled rules of a list, each with a name no other has.
     *
     * @param list     the list's property: {@code sluice.http.rules}
     * @param shownIn  where the limiters' names show, for the message of a rule without one
     * @param disabled whether {@code sluice.limits.<name>.enabled} turns the rule off
     * @throws SluiceConfigurationException when a rule has no name or the name of an earlier one
     */
    public static <P, R> List<R> parse(String list, List<P> configured, Function<P, @Nullable String> nameOf,
                                       String shownIn, Predicate<String> disabled, Parser<P, R> parser) {
        List<R> parsed = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < configured.size(); i++) {
            P rule = configured.get(i);
            String property = list + "[" + i + "]";
            String name = nameOf.apply(rule);
            if (name == null || name.isBlank()) {
                throw new SluiceConfigurationException(property + " has no name", "Set " + property + ".name: it"
                        + " names the limiter in " + shownIn + ".", null);
            }
            if (!names.add(name)) {
                throw new SluiceConfigurationException(property + " is named '" + name + "' like an earlier rule",
                        "Give each rule its own name; a rule may have several tiers.", null);
            }
            if (!disabled.test(name)) {
                parsed.add(parser.parse(property, name, rule));
            }
        }
        return List.copyOf(parsed);
    }

    /**
     * A rule's methods, in upper case.
     *
     * @throws SluiceConfigurationException when one is not an HTTP method
     */
    public static Set<String> methods(String property, String name, List<String> configured) {
        Set<String> methods = new HashSet<>();
        for (String method : configured) {
            String upper = method.trim().toUpperCase(Locale.ROOT);
            if (!upper.matches("GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|TRACE")) {
                throw new SluiceConfigurationException(property + ".methods (" + name + ") has '" + method
                        + "', which is not an HTTP method", "Use GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS or"
                        + " TRACE, or leave methods out for all of them.", null);
            }
            methods.add(upper);
        }
        return methods;
    }

    /**
     * A rule's path pattern.
     *
     * @param example patterns to show in the message of one that does not parse
     * @throws SluiceConfigurationException when it does not parse
     */
    public static PathPattern pattern(PathPatternParser parser, String property, String name, String path,
                                      String example) {
        try {
            return parser.parse(path);
        } catch (PatternParseException e) {
            throw new SluiceConfigurationException(property + ".path (" + name + ") '" + path
                    + "' is not a path pattern: " + e.getMessage(), "Write it in Spring's PathPattern syntax: "
                    + example + ".", e);
        }
    }

    /** The rules a request matches, in their order. */
    public static <R> List<R> matching(List<R> rules, Predicate<R> matches) {
        List<R> matched = null;
        for (R rule : rules) {
            if (matches.test(rule)) {
                if (matched == null) {
                    matched = new ArrayList<>(2);
                }
                matched.add(rule);
            }
        }
        return matched == null ? List.of() : matched;
    }

    /**
     * What a request whose key or plan cannot be worked out is counted as, once the listeners
     * have heard of it: under the key of such requests ({@link KeyErrorPolicy#SHARED_KEY}), or
     * not at all ({@code null}, {@link KeyErrorPolicy#SKIP}).
     *
     * @param shared the call counted under the shared key
     * @throws RateLimitKeyException the error, under {@link KeyErrorPolicy#REJECT}
     */
    public static <C> @Nullable C afterKeyError(RateLimiterRegistry registry, RateLimiter limiter,
                                                RateLimitKeyException error, KeyErrorPolicy policy, C shared) {
        for (RateLimitListener listener : registry.listeners()) {
            listener.onKeyError(limiter, error);
        }
        return switch (policy) {
            case REJECT -> throw error;
            case SHARED_KEY -> shared;
            case SKIP -> null;
        };
    }
}
