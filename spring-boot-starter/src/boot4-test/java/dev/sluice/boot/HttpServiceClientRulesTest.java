package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.tck.MutableClock;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.service.annotation.GetExchange;
import org.springframework.web.service.annotation.HttpExchange;
import org.springframework.web.service.registry.ImportHttpServices;

/**
 * Client rules on the HTTP service clients Spring Boot 4 makes for {@code @ImportHttpServices}
 * groups, which Spring Framework 7 introduced.
 */
class HttpServiceClientRulesTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2031-03-01T00:00:00Z"));
    private final PartnerStub partner = PartnerStub.start(clock);

    @AfterEach
    void stop() {
        partner.close();
    }

    @Test
    void httpServiceClientsSpringBootMakesAreLimitedToo() {
        try (ConfigurableApplicationContext app = ClientRulesTest.start(HttpServiceApp.class, clock, partner,
                "sluice.client.rules[0].on-limit=reject",
                "spring.http.serviceclient.partner.base-url=" + partner.url())) {
            Quotes quotes = app.getBean(Quotes.class);
            for (int i = 0; i < 5; i++) {
                quotes.quote("ACME");
            }
            assertThatThrownBy(() -> quotes.quote("ACME")).isInstanceOf(RateLimitExceededException.class);
            assertThat(partner.arrivals()).hasSize(5);
        }
    }

    /** The partner's API, as an HTTP service interface. */
    @HttpExchange("/quotes")
    interface Quotes {

        @GetExchange("/{symbol}")
        String quote(@PathVariable String symbol);
    }

    /** The application, with the partner's API as an HTTP service client of the group {@code partner}. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @ImportHttpServices(group = "partner", types = Quotes.class)
    static class HttpServiceApp extends ClientRulesTest.ClientApp {
    }
}
