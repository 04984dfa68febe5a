package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.tck.MutableClock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * A call the application makes to a partner, refused by the partner's client rule, escapes a
 * handler: the application's own client asked for nothing wrong, so it gets a 503 with
 * {@code Retry-After}, on Spring MVC and on WebFlux, and neither the rule's name nor the
 * partner's quota is published in its answer.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class OutboundRejectionAnswerTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final MutableClock clock = new MutableClock(Instant.parse("2031-06-01T00:00:00Z"));
    private final PartnerStub partner = PartnerStub.start(clock);
    private ConfigurableApplicationContext app;

    @AfterEach
    void stop() {
        if (app != null) {
            app.close();
        }
        partner.close();
    }

    /** Spring MVC's endpoint: a quote from the partner, through Spring Boot's RestClient. */
    @RestController
    static class ServletQuotes {

        private final RestClient partner;

        ServletQuotes(RestClient.Builder builder, Environment environment) {
            this.partner = builder.baseUrl(environment.getRequiredProperty("partner.url")).build();
        }

        @GetMapping("/quote")
        String quote() {
            partner.get().uri("/quotes/ACME").retrieve().toBodilessEntity();
            return "quoted";
        }
    }

    /** WebFlux's endpoint: the same through Spring Boot's WebClient. */
    @RestController
    static class ReactiveQuotes {

        private final WebClient partner;

        ReactiveQuotes(WebClient.Builder builder, Environment environment) {
            this.partner = builder.baseUrl(environment.getRequiredProperty("partner.url")).build();
        }

        @GetMapping("/quote")
        Mono<String> quote() {
            return partner.get().uri("/quotes/ACME").retrieve().toBodilessEntity().thenReturn("quoted");
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(ServletQuotes.class)
    static class ServletApp {
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(ReactiveQuotes.class)
    static class ReactiveApp {
    }

    @ParameterizedTest
    @ValueSource(strings = {"servlet", "reactive"})
    void aRefusedOutboundCallIsA503WithRetryAfterAndNoRateLimitFields(String stack) throws Exception {
        app = new SpringApplicationBuilder(stack.equals("servlet") ? ServletApp.class : ReactiveApp.class)
                .initializers(context -> context.getBeanFactory().registerSingleton("clock", clock))
                .properties("spring.main.web-application-type=" + stack,
                        "partner.url=" + partner.url(),
                        "sluice.client.rules[0].name=partner",
                        "sluice.client.rules[0].host=127.0.0.1:" + partner.port(),
                        "sluice.client.rules[0].tiers[0].limit=1",
                        "sluice.client.rules[0].tiers[0].window=1m",
                        "sluice.client.rules[0].on-limit=reject")
                .run("--server.port=0", "--spring.config.name=outbound-rejection");
        int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);

        assertThat(get(port).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = get(port);

        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(refused.headers().map().keySet()).as("fields")
                .noneMatch(field -> field.toLowerCase().startsWith("ratelimit"));
        assertThat(refused.body()).doesNotContain("partner").doesNotContain("violated-policies");
        assertThat(partner.arrivals()).hasSize(1);
    }

    private static HttpResponse<String> get(int port) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/quote")).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
