package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;

/**
 * An application configured by one client rule alone, calling from 16 threads at once a partner
 * that allows 5 calls in 2 seconds and counts them by its own clock when they arrive, each after
 * travelling up to 150 ms: the partner never sees more than 5 in any 2 seconds. (Exact as long as
 * answers come back within the window, which the window's length leaves a loaded machine ample
 * room for.)
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClientRulesUnderLoadTest {

    @Test
    void callsFromManyThreadsNeverExceedThePartnersLimitInAnyWindowOfItsClock() throws Exception {
        try (PartnerStub partner = PartnerStub.start(InstantSource.system());
             ConfigurableApplicationContext app = new SpringApplicationBuilder(ClientApp.class)
                     .web(WebApplicationType.NONE)
                     .properties("sluice.client.rules[0].name=partner",
                             "sluice.client.rules[0].host=127.0.0.1",
                             "sluice.client.rules[0].tiers[0].limit=5",
                             "sluice.client.rules[0].tiers[0].window=2s")
                     .run("--spring.config.name=client-rules-under-load")) {
            // Requests travel unevenly: what the partner counts is when they arrive.
            partner.beforeCounting(arrival -> {
                try {
                    Thread.sleep(ThreadLocalRandom.current().nextInt(150));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            RestClient client = app.getBean(RestClient.Builder.class).baseUrl(partner.url()).build();
            ExecutorService threads = Executors.newFixedThreadPool(16);
            try {
                List<Future<?>> calls = new ArrayList<>();
                for (int i = 0; i < 25; i++) {
                    int call = i;
                    calls.add(threads.submit(() -> client.get().uri("/quotes/{i}", call).retrieve()
                            .toBodilessEntity()));
                }
                for (Future<?> call : calls) {
                    call.get(1, TimeUnit.MINUTES);
                }
            } finally {
                threads.shutdownNow();
            }

            assertThat(partner.arrivals()).hasSize(25);
            assertThat(partner.mostWithin(Duration.ofSeconds(2))).as("arrivals within any 2 s of the partner's")
                    .isLessThanOrEqualTo(5);
        }
    }

    /** The application: Spring Boot's RestClient and Sluice. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ClientApp {
    }
}
