package dev.sluice.boot.diagnostics;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.core.SpringVersion;

/**
 * Stops an application that runs this starter on Spring Boot before 4.0 (or on Spring
 * Framework before 7.0) with one sentence saying so, before the auto-configuration fails
 * with a {@code NoSuchMethodError} deep inside Spring.
 *
 * <p>It must run on the lines it refuses, so it uses only what Spring Boot 2.7, 3.x and 4.x
 * all have: it is registered in {@code META-INF/spring.factories} as an
 * {@link ApplicationContextInitializer}, and it detects the lines by classes they introduced
 * rather than by version strings, which a repackaged jar may have lost.
 * {@link UnsupportedSpringBootFailureAnalyzer} turns its exception into Spring Boot's
 * start-up failure report.
 */
final class SpringBootVersionCheck implements ApplicationContextInitializer<ConfigurableApplicationContext>, Ordered {

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        SpringBootLine running = SpringBootLine.of(SpringBootVersionCheck.class.getClassLoader());
        if (running != StarterLine.BUILT_FOR) {
            throw new UnsupportedSpringBootException(StarterLine.BUILT_FOR, running, sluiceVersion(),
                    SpringBootVersion.getVersion(), SpringVersion.getVersion());
        }
    }

    /**
     * First: the check must come before anything that could trip over the missing APIs.
     *
     * @return {@link Ordered#HIGHEST_PRECEDENCE}
     */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    /** The version in the starter jar's manifest; null when running from a classes directory. */
    private static @Nullable String sluiceVersion() {
        return SpringBootVersionCheck.class.getPackage().getImplementationVersion();
    }
}
