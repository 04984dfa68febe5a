package dev.sluice.boot.diagnostics;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Reports {@code sluice.*} properties that bind to nothing, which Sluice refuses rather than
 * ignore: a misspelled setting would otherwise leave a limit as it was without a word. The most
 * common causes get their own advice: a limiter name with dots (a default name such as
 * {@code OtpController.sendOtp}) written without brackets, which Spring Boot reads as nested
 * properties; and one element of a list set in a higher-priority source (the command line),
 * which replaces the whole list of the lower-priority ones (application.yml), so that the
 * settings of their elements bind to nothing.
 */
class UnboundSluicePropertiesFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException>
        implements Ordered {

    private static final ConfigurationPropertyName LIMITS = ConfigurationPropertyName.of("sluice.limits");
    private static final Set<String> LIMIT_PROPERTIES = Set.of("enabled", "tiers", "plans", "condition");
    /** Sluice's lists whose elements take settings. */
    private static final Set<String> LISTS = Set.of("rules", "tiers");
    /** What the elements of Sluice's lists take, in the uniform form. */
    private static final Set<String> ELEMENT_PROPERTIES = Set.of("name", "host", "path", "methods", "condition", "key",
            "plan", "counton", "tiers", "onlimit", "maxwait", "adapt", "limit", "window", "algorithm", "countrejected",
            "blockfor");

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        List<String> problems = new ArrayList<>();
        List<String> fixes = new ArrayList<>();
        List<String> replacedLists = new ArrayList<>();
        for (ConfigurationProperty property : cause.getUnboundProperties()) {
            ConfigurationPropertyName name = property.getName();
            if (!name.toString().startsWith("sluice.")) {
                continue;
            }
            String origin = property.getOrigin() == null ? "" : " (" + property.getOrigin() + ")";
            String bracketed = bracketedLimiterName(name);
            ConfigurationPropertyName list = replacedList(name);
            if (bracketed != null) {
                problems.add(name + origin + " splits a limiter name at its dots");
                fixes.add(bracketed);
            } else if (list != null) {
                problems.add(name + origin + " belongs to a list that a higher-priority source replaced whole");
                if (!replacedLists.contains(list.toString())) {
                    replacedLists.add(list.toString());
                }
            } else {
                problems.add(name + origin + " is not a Sluice setting");
            }
        }
        if (problems.isEmpty()) {
            return null;
        }
        if (!replacedLists.isEmpty() && fixes.isEmpty()) {
            return new FailureAnalysis("Sluice does not use these properties, so they would change nothing:\n    "
                    + String.join("\n    ", problems), "Spring Boot takes a list from one property source whole:"
                    + " setting one element of " + String.join(", ", replacedLists) + " on the command line, in an"
                    + " environment variable or in another higher-priority source replaces every element the"
                    + " lower-priority sources (application.yml) give. Give the whole list, every element with all its"
                    + " settings, in the source that overrides it, or change the element in the file.", cause);
        }
        String action = fixes.isEmpty()
                ? "Correct or remove these properties. A limiter under sluice.limits.<name> takes enabled,"
                        + " tiers[n].limit, window, algorithm, count-rejected and block-for,"
                        + " plans.<plan>.tiers[n] and condition; a rule under sluice.http.rules[n] takes name, path,"
                        + " methods, condition, key, plan, count-on and tiers[n]."
                : "Write limiter names that contain dots in brackets: " + String.join(", ", fixes) + ".";
        return new FailureAnalysis("Sluice does not use these properties, so they would change nothing:\n    "
                + String.join("\n    ", problems), action, cause);
    }

    /**
     * The list a property is an element's setting of, when the setting is one Sluice's lists take:
     * the property was then left out because a higher-priority source gives the list, which
     * Spring Boot takes whole. {@code null} for a property that is not such a setting.
     */
    private static @Nullable ConfigurationPropertyName replacedList(ConfigurationPropertyName name) {
        int elements = name.getNumberOfElements();
        for (int i = 1; i + 1 < elements; i++) {
            if (name.isNumericIndex(i)) {
                return LISTS.contains(name.getElement(i - 1, ConfigurationPropertyName.Form.UNIFORM))
                        && ELEMENT_PROPERTIES.contains(name.getElement(i + 1, ConfigurationPropertyName.Form.UNIFORM))
                        ? name.chop(i) : null;
            }
        }
        return null;
    }

    /**
     * The property written with its limiter name in brackets, when it reads as a dotted name
     * split into nested properties: {@code sluice.limits.OtpController.sendOtp.tiers[0].limit}.
     */
    private static @Nullable String bracketedLimiterName(ConfigurationPropertyName name) {
        if (!LIMITS.isAncestorOf(name)) {
            return null;
        }
        int elements = name.getNumberOfElements();
        for (int i = 3; i < elements; i++) {
            if (LIMIT_PROPERTIES.contains(name.getElement(i, ConfigurationPropertyName.Form.UNIFORM))) {
                List<String> parts = new ArrayList<>();
                for (int j = 2; j < i; j++) {
                    parts.add(name.getElement(j, ConfigurationPropertyName.Form.ORIGINAL));
                }
                StringBuilder rest = new StringBuilder();
                for (int j = i; j < elements; j++) {
                    rest.append(name.isNumericIndex(j) ? "[" + name.getElement(j, ConfigurationPropertyName.Form.ORIGINAL)
                            + "]" : "." + name.getElement(j, ConfigurationPropertyName.Form.ORIGINAL));
                }
                return "sluice.limits[" + String.join(".", parts) + "]" + rest;
            }
        }
        return null;
    }

    /** Ahead of Spring Boot's own analyzer of unbound properties, which gives no such advice. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
