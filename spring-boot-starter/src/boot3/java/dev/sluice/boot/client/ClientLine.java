package dev.sluice.boot.client;

import java.util.List;
import org.springframework.boot.web.client.RestClientCustomizer;
import org.springframework.boot.web.client.RestTemplateCustomizer;
import org.springframework.boot.web.reactive.function.client.WebClientCustomizer;

/**
 * What the client rules need from Spring Boot 3.5 under the names it has there: the HTTP client
 * customizers in Spring Boot's core module. The Spring Boot 4 starter has a class of the same name
 * for its line.
 */
final class ClientLine {

    /** Present when the {@code RestClient} and {@code RestTemplate} customizers are. */
    static final String BLOCKING_CLIENTS = "org.springframework.boot.web.client.RestClientCustomizer";

    /** Present when the {@code WebClient} customizer is. */
    static final String REACTIVE_CLIENTS = "org.springframework.boot.web.reactive.function.client.WebClientCustomizer";

    /** The builders Spring Boot provides, to which the rules apply. */
    static final List<String> BUILDERS = List.of("org.springframework.web.client.RestClient$Builder",
            "org.springframework.boot.web.client.RestTemplateBuilder", "org.springframework.web.reactive.function.client.WebClient$Builder");

    /** What brings those builders. */
    static final String BUILDER_DEPENDENCIES = "org.springframework.boot:spring-boot-starter-web (RestClient, RestTemplate) or"
            + " org.springframework.boot:spring-boot-starter-webflux (WebClient)";

    private ClientLine() {
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
}
