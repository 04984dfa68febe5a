package dev.sluice.gateway.docs;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/** The {@code apiKeyResolver} of docs/spring-cloud-gateway.md: the WebFlux gateway's key of a request. */
@Configuration(proxyBeanMethods = false)
public class ApiKeys {

    // tag::api-key-resolver[]
    @Bean
    KeyResolver apiKeyResolver() {
        // No key (Mono.empty()) for a request without the header: it follows sluice.key-error.
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
    }
    // end::api-key-resolver[]
}
