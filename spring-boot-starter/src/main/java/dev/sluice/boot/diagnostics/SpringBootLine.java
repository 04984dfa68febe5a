package dev.sluice.boot.diagnostics;

import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * The Spring Boot lines Sluice has a starter for, and how to tell which one an application runs.
 * A line is recognised by classes it introduced rather than by version strings, which a
 * repackaged jar may have lost; this code uses only what Spring Boot 2.7, 3.x and 4.x all have,
 * so that it can refuse the lines it does not support.
 */
enum SpringBootLine {

    /** Spring Boot 3.5 on Spring Framework 6.2. */
    SPRING_BOOT_3_5("Spring Boot 3.5 (Spring Framework 6.2)", "sluice-spring-boot3-starter"),

    /** Spring Boot 4.x on Spring Framework 7. */
    SPRING_BOOT_4("Spring Boot 4.x (Spring Framework 7)", "sluice-spring-boot-starter");

    /** Introduced by Spring Boot 3.5, in its auto-configuration module. */
    private static final String SPRING_BOOT_3_5_CLASS =
            "org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty";

    /** Introduced by Spring Boot 4.0, in its core module. */
    private static final String SPRING_BOOT_4_CLASS = "org.springframework.boot.EnvironmentPostProcessor";

    /** Introduced by Spring Framework 7.0, in spring-core. */
    private static final String SPRING_FRAMEWORK_7_CLASS = "org.springframework.core.retry.RetryTemplate";

    private final String description;

    private final String starter;

    SpringBootLine(String description, String starter) {
        this.description = description;
        this.starter = starter;
    }

    /**
     * The line the classes a class loader sees belong to.
     *
     * @param classLoader the application's class loader
     * @return the line, or null for a line Sluice has no starter for (before 3.5, or Spring Boot 4
     *         on Spring Framework 6)
     */
    static @Nullable SpringBootLine of(ClassLoader classLoader) {
        if (ClassUtils.isPresent(SPRING_BOOT_4_CLASS, classLoader)) {
            return ClassUtils.isPresent(SPRING_FRAMEWORK_7_CLASS, classLoader) ? SPRING_BOOT_4 : null;
        }
        return ClassUtils.isPresent(SPRING_BOOT_3_5_CLASS, classLoader) ? SPRING_BOOT_3_5 : null;
    }

    /**
     * The line's versions, as a user reads them.
     *
     * @return for example "Spring Boot 4.x (Spring Framework 7)"
     */
    String description() {
        return description;
    }

    /**
     * Coordinates of the starter for this line.
     *
     * @return {@code dev.sluice:} and the artifact
     */
    String starter() {
        return "dev.sluice:" + starter;
    }
}
