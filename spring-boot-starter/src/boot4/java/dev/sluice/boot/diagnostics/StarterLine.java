package dev.sluice.boot.diagnostics;

/**
 * The Spring Boot line this jar is built for, which {@link SpringBootVersionCheck} holds the
 * application's against. The Spring Boot 3.5 starter has a class of the same name for its line; what
 * else differs between the lines has a class of its own beside the code that needs it:
 * {@code ClientLine} for the HTTP client customizers, {@code HealthLine} for health.
 */
final class StarterLine {

    /** The line this jar runs on. */
    static final SpringBootLine BUILT_FOR = SpringBootLine.SPRING_BOOT_4;

    private StarterLine() {
    }
}
