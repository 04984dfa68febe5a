package dev.sluice.boot;

import org.jspecify.annotations.Nullable;

/**
 * Thrown at start-up by {@link SpringBootVersionCheck} when the application runs a Spring
 * Boot or Spring Framework line this starter does not support. Its message is one sentence
 * that names the versions needed and found, and what to do.
 */
final class UnsupportedSpringBootException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String problem;

    private final String action;

    /**
     * Describes the mismatch.
     *
     * @param sluiceVersion          this starter's version, or null when unknown
     * @param springBootVersion      the application's Spring Boot version, or null when unknown
     * @param springFrameworkVersion the application's Spring Framework version, or null when unknown
     */
    UnsupportedSpringBootException(@Nullable String sluiceVersion, @Nullable String springBootVersion,
            @Nullable String springFrameworkVersion) {
        this(problem(sluiceVersion, springBootVersion, springFrameworkVersion),
                "upgrade Spring Boot to 4.x, or remove dev.sluice:sluice-spring-boot-starter");
    }

    private UnsupportedSpringBootException(String problem, String action) {
        super(problem + ": " + action + ".");
        this.problem = problem;
        this.action = action;
    }

    private static String problem(@Nullable String sluiceVersion, @Nullable String springBootVersion,
            @Nullable String springFrameworkVersion) {
        return "Sluice" + (sluiceVersion == null ? "" : " " + sluiceVersion)
                + " needs Spring Boot 4.x (Spring Framework 7); this application runs Spring Boot "
                + orUnknown(springBootVersion) + " (Spring Framework " + orUnknown(springFrameworkVersion) + ")";
    }

    private static String orUnknown(@Nullable String version) {
        return version == null ? "of an unknown version" : version;
    }

    /**
     * What is wrong, without the remedy.
     *
     * @return the versions needed and found
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
