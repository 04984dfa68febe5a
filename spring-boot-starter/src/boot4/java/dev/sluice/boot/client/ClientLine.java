package dev.sluice.boot.client;

import java.util.List;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;

/**
 * What the client rules need from Spring Boot 4 under the names it has there: the HTTP client
 * customizers in {@code spring-boot-restclient} and {@code spring-boot-webclient}. The Spring Boot
 * 3.5 starter has a class of the same name for its line.
 */
final class ClientLine {

    /** Present when the {@code RestClient} and {@code RestTemplate} customizers are. */
    static final String BLOCKING_CLIENTS = "org.springframework.boot.restclient.RestClientCustomizer";

    /** Present when the {@code WebClient} customizer is. */
    static final String REACTIVE_CLIENTS = "org.springframework.boot.webclient.WebClientCustomizer";

    /** The builders Spring Boot provides, to which the rules apply. */
    static final List<String> BUILDERS = List.of("org.springframework.web.client.RestClient$Builder",
            "org.springframework.boot.restclient.RestTemplateBuilder", "org.springframework.web.reactive.function.client.WebClient$Builder");

    /** What brings those builders. */
    static final String BUILDER_DEPENDENCIES = "org.springframework.boot:spring-boot-starter-restclient (RestClient, RestTemplate) or"
            + " org.springframework.boot:spring-boot-starter-webclient (WebClient)";

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
