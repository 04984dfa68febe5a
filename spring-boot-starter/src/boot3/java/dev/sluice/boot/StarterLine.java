package dev.sluice.boot;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.web.client.RestClientCustomizer;
import org.springframework.boot.web.client.RestTemplateCustomizer;
import org.springframework.boot.web.reactive.function.client.WebClientCustomizer;

/**
 * What the code shared by both starters needs from Spring Boot 3.5 under the names it has there:
 * health in the actuator, the HTTP client customizers in Spring Boot's core module. The
 * Spring Boot 4 starter has a class of the same name for its line.
 */
final class StarterLine {

    /** The line this jar runs on. */
    static final SpringBootLine BUILT_FOR = SpringBootLine.SPRING_BOOT_3_5;

    /** Present when the {@code RestClient} and {@code RestTemplate} customizers are. */
    static final String BLOCKING_CLIENTS = "org.springframework.boot.web.client.RestClientCustomizer";

    /** Present when the {@code WebClient} customizer is. */
    static final String REACTIVE_CLIENTS = "org.springframework.boot.web.reactive.function.client.WebClientCustomizer";

    private StarterLine() {
    }

    /** Customizes every {@code RestClient.Builder} Spring Boot provides. */
    interface RestClients extends RestClientCustomizer {
    }

    /** Customizes every {@code RestTemplate} Spring Boot's builder makes. */
    interface RestTemplates extends RestTemplateCustomizer {
    }

    /** Customizes every {@code WebClient.Builder} Spring Boot provides. */
    interface WebClients extends WebClientCustomizer {
    }

    /** A health indicator that reports what {@link #report()} says. */
    interface HealthIndicator extends org.springframework.boot.actuate.health.HealthIndicator {

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
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
    @ConditionalOnEnabledHealthIndicator("sluice")
    @interface ConditionalOnHealthIndicator {
    }
}
