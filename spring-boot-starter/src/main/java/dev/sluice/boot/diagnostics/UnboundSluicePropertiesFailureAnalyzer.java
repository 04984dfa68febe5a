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
 * common cause gets its own advice: a limiter name with dots (a default name such as
 * {@code OtpController.sendOtp}) written without brackets, which Spring Boot reads as nested
 * properties.
 */
class UnboundSluicePropertiesFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException>
        implements Ordered {

    private static final ConfigurationPropertyName LIMITS = ConfigurationPropertyName.of("sluice.limits");
    private static final Set<String> LIMIT_PROPERTIES = Set.of("enabled", "tiers", "plans", "condition");

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        List<String> problems = new ArrayList<>();
        List<String> fixes = new ArrayList<>();
        for (ConfigurationProperty property : cause.getUnboundProperties()) {
            ConfigurationPropertyName name = property.getName();
            if (!name.toString().startsWith("sluice.")) {
                continue;
            }
            String origin = property.getOrigin() == null ? "" : " (" + property.getOrigin() + ")";
            String bracketed = bracketedLimiterName(name);
            if (bracketed != null) {
                problems.add(name + origin + " splits a limiter name at its dots");
                fixes.add(bracketed);
            } else {
                problems.add(name + origin + " is not a Sluice setting");
            }
        }
        if (problems.isEmpty()) {
            return null;
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
