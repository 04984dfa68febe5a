package dev.sluice.boot.actuate;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * What the health component needs from Spring Boot 4 under the names it has there: health in
 * {@code spring-boot-health}. The Spring Boot 3.5 starter has a class of the same name for its
 * line.
 */
final class HealthLine {

    private HealthLine() {
    }

    /** A health indicator that reports what {@link #report()} says. */
    interface HealthIndicator extends org.springframework.boot.health.contributor.HealthIndicator {

        /**
         * The component's health now.
         *
         * @return its status and details
         */
        HealthReport report();

        @Override
        default Health health() {
            HealthReport report = report();
            return Health.status(new Status(report.status(), report.description())).withDetails(report.details()).build();
        }
    }

    /**
     * Applies when Spring Boot's health support is present and the {@code sluice} health
     * indicator is enabled ({@code management.health.sluice.enabled}, by default
     * {@code management.health.defaults.enabled}).
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnEnabledHealthIndicator("sluice")
    @interface ConditionalOnHealthIndicator {
    }
}
