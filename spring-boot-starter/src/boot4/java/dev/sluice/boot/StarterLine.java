package dev.sluice.boot;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;

/**
 * What the code shared by both starters needs from Spring Boot 4 under the names it has there:
 * health in {@code spring-boot-health}, the HTTP client customizers in
 * {@code spring-boot-restclient} and {@code spring-boot-webclient}. The Spring Boot 3.5 starter
 * has a class of the same name for its line.
 */
final class StarterLine {

    /** The line this jar runs on. */
    static final SpringBootLine BUILT_FOR = SpringBootLine.SPRING_BOOT_4;

    /** Present when the {@code RestClient} and {@code RestTemplate} customizers are. */
    static final String BLOCKING_CLIENTS = "org.springframework.boot.restclient.RestClientCustomizer";

    /** Present when the {@code WebClient} customizer is. */
    static final String REACTIVE_CLIENTS = "org.springframework.boot.webclient.WebClientCustomizer";

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
