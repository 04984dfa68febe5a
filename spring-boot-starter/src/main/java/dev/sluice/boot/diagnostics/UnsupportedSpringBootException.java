package dev.sluice.boot.diagnostics;

import java.util.Arrays;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Thrown at start-up by {@link SpringBootVersionCheck} when the application runs a Spring
 * Boot line this starter is not built for. Its message is one sentence that names the line
 * needed, the versions found, and the starter to use instead.
 */
final class UnsupportedSpringBootException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String problem;

    private final String action;

    /**
     * Describes the mismatch.
     *
     * @param builtFor               the line this starter is built for
     * @param running                the line the application runs, or null for one Sluice has no starter for
     * @param sluiceVersion          this starter's version, or null when unknown
     * @param springBootVersion      the application's Spring Boot version, or null when unknown
     * @param springFrameworkVersion the application's Spring Framework version, or null when unknown
     */
    UnsupportedSpringBootException(SpringBootLine builtFor, @Nullable SpringBootLine running,
            @Nullable String sluiceVersion, @Nullable String springBootVersion,
            @Nullable String springFrameworkVersion) {
        this(builtFor.starter() + (sluiceVersion == null ? "" : " " + sluiceVersion) + " needs "
                        + builtFor.description() + "; this application runs Spring Boot " + orUnknown(springBootVersion)
                        + " (Spring Framework " + orUnknown(springFrameworkVersion) + ")",
                running == null ? "upgrade Spring Boot to one of the lines Sluice has a starter for: " + starters()
                        : "use " + running.starter() + " instead, the starter for " + running.description());
    }

    private UnsupportedSpringBootException(String problem, String action) {
        super(problem + ": " + action + ".");
        this.problem = problem;
        this.action = action;
    }

    private static String starters() {
        return Arrays.stream(SpringBootLine.values()).map(line -> line.description() + " with " + line.starter())
                .collect(Collectors.joining(", or "));
    }

    private static String orUnknown(@Nullable String version) {
        return version == null ? "of an unknown version" : version;
    }

    /**
     * What is wrong, without the remedy.
     *
     * @return the line needed and the versions found
     */
    String problem() {
        return problem;
    }

    /**
     * What to do about it.
     *
     * @return the remedy, in lower case
     */
    String action() {
        return action;
    }
}
