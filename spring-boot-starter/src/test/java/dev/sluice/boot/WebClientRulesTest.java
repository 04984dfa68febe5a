package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.config.RateLimiterRegistryCustomizer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A client rule on the {@code WebClient} Spring Boot builds: requests subscribed on Reactor's
 * non-blocking threads wait for their permits on timers, and under BlockHound no blocking call
 * is made from Sluice's code on those threads.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class WebClientRulesTest {

    private static final AtomicBoolean INSTALLED = new AtomicBoolean();
    /** Every blocking call BlockHound caught on a non-blocking thread with Sluice's code on the stack. */
    private static final List<String> BLOCKED = new CopyOnWriteArrayList<>();
    /** When the partner rule admitted each request, as Sluice decided it. */
    private static final List<Instant> ADMITTED = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void installBlockHound() {
        if (INSTALLED.compareAndSet(false, true)) {
            // Recorded rather than thrown, and only with Sluice's code on the stack: what Reactor Netty
            // and Spring do on their own threads is not under test here.
            BlockHound.builder()
                    .loadIntegrations()
                    // The in-memory store's key lock is held for dozens of nanoseconds and never parks: a
                    // caller that finds it taken spins (Thread.onSpinWait, then Thread.yield), as designed.
                    .allowBlockingCallsInside("dev.sluice.KeyState", "lockContended")
                    .blockingMethodCallback(method -> {
                        if (Arrays.stream(new Throwable().getStackTrace())
                                .anyMatch(frame -> frame.getClassName().startsWith("dev.sluice."))) {
                            BLOCKED.add(Thread.currentThread().getName() + ": " + method);
                        }
                    })
                    .install();
        }
    }

    @Test
    void requestsOnNonBlockingThreadsWaitForTheirPermitsOnTimersWithoutBlocking() {
        try (PartnerStub partner = PartnerStub.start(InstantSource.system());
             ConfigurableApplicationContext app = new SpringApplicationBuilder(ReactiveClientApp.class)
                     .web(WebApplicationType.NONE)
                     .properties("sluice.client.rules[0].name=partner",
                             "sluice.client.rules[0].host=127.0.0.1:" + partner.port(),
                             "sluice.client.rules[0].tiers[0].limit=2",
                             "sluice.client.rules[0].tiers[0].window=1s")
                     .run("--spring.config.name=webclient-rules")) {
            WebClient client = app.getBean(WebClient.Builder.class).baseUrl(partner.url()).build();
            BLOCKED.clear();
            ADMITTED.clear();

            List<Integer> statuses = Flux.range(0, 6)
                    .flatMap(i -> client.get().uri("/quotes/{i}", i).exchangeToMono(response ->
                            response.releaseBody().thenReturn(response.statusCode().value()))
                            .subscribeOn(Schedulers.parallel()))
                    .collectList()
                    .block(Duration.ofSeconds(30));

            assertThat(statuses).hasSize(6).containsOnly(200);
            assertThat(partner.arrivals()).hasSize(6);
            // Where Sluice lets each request go, which the limit is about: on a busy machine a request may reach
            // the partner, or even the next filter, later than the next one is let go. The times are read a
            // moment after each decision: a span a little shorter than the window.
            List<Instant> admitted = List.copyOf(ADMITTED);
            assertThat(PartnerStub.mostWithin(admitted, Duration.ofMillis(900)))
                    .as("requests let go within any 900 ms").isEqualTo(2);
            assertThat(Duration.between(admitted.get(0), admitted.get(5))).as("six calls at 2 a second waited")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(1_900));
            assertThat(BLOCKED).as("blocking calls on non-blocking threads").isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sliding-log", "token-bucket"})
    void requestsCancelledWhileTheyWaitLeaveTheLineAndGiveTheirPermitsBack(String algorithm) {
        try (PartnerStub partner = PartnerStub.start(InstantSource.system());
             ConfigurableApplicationContext app = new SpringApplicationBuilder(ReactiveClientApp.class)
                     .web(WebApplicationType.NONE)
                     .properties("sluice.client.rules[0].name=partner",
                             "sluice.client.rules[0].host=127.0.0.1:" + partner.port(),
                             "sluice.client.rules[0].tiers[0].limit=1",
                             "sluice.client.rules[0].tiers[0].window=1s",
                             "sluice.client.rules[0].tiers[0].algorithm=" + algorithm,
                             "sluice.client.rules[0].max-wait=30s")
                     .run("--spring.config.name=webclient-rules")) {
            WebClient client = app.getBean(WebClient.Builder.class).baseUrl(partner.url()).build();

            // Ten at once, each given up by its caller after 300 ms: one is let go, nine wait and are cancelled.
            List<String> outcomes = Flux.range(0, 10)
                    .flatMap(i -> client.get().uri("/quotes/{i}", i).retrieve().toBodilessEntity()
                            .map(response -> "answered")
                            .timeout(Duration.ofMillis(300), Mono.just("gave up")))
                    .collectList()
                    .block(Duration.ofSeconds(30));
            assertThat(outcomes).hasSize(10).contains("gave up");

            long asked = System.nanoTime();
            client.get().uri("/quotes/next").retrieve().toBodilessEntity().block(Duration.ofSeconds(30));
            Duration waited = Duration.ofNanos(System.nanoTime() - asked);

            // The next permit is a second after the one let go; behind nine callers that had gone, about ten.
            assertThat(waited).as("the next request's wait").isLessThan(Duration.ofSeconds(4));
            assertThat(partner.arrivals()).as("requests that reached the partner")
                    .hasSize(1 + (int) outcomes.stream().filter("answered"::equals).count());
        }
    }

    /** The application: Spring Boot's WebClient and Sluice. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ReactiveClientApp {

        @Bean
        RateLimiterRegistryCustomizer admissions() {
            return registry -> registry.listener(new RateLimitListener() {
                @Override
                public void onDecision(RateLimiter limiter, String key, Decision decision) {
                    if (decision.allowed() && limiter.name().equals("partner")) {
                        ADMITTED.add(Instant.now());
                    }
                }
            });
        }
    }
}
