package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * An HTTP rule with a concurrency tier ({@code tiers[0].concurrency: 2}), on Spring MVC (Tomcat)
 * and WebFlux (Netty): at most two requests of one client run at once, a third is answered 429
 * with the {@code concurrent-requests} quota unit, and a request gives its permit back when it
 * ends, also when its client goes away. Each test poses as another client behind the trusted
 * local proxy.
 */
class HttpConcurrencyLimitsTest {

    /** Requests of {@code /exports} with {@code X-Hold} wait for this before they are answered. */
    static volatile CompletableFuture<Void> released = CompletableFuture.completedFuture(null);
    /** The longest a held request of WebFlux's endpoint waits before it fails. */
    static final Duration HOLD = Duration.ofSeconds(8);
    /**
     * Whether WebFlux's server cancels a request whose client closed its connection before the
     * answer: Reactor Netty 1.3 (Spring Boot 4) does; 1.2 (Spring Boot 3.5) was seen to run the
     * request on until its handler ended.
     */
    static final boolean CLOSED_CONNECTIONS_CANCEL = SpringBootVersion.getVersion().startsWith("4.");
    /** How many held requests the handlers have started. */
    static final AtomicInteger HOLDING = new AtomicInteger();

    /** Spring MVC's endpoint. */
    @RestController
    static class ServletEndpoints {

        @GetMapping("/exports")
        Map<String, String> export(@RequestHeader(name = "X-Hold", required = false) String hold)
                throws Exception {
            if (hold != null) {
                HOLDING.incrementAndGet();
                released.get(20, TimeUnit.SECONDS);
            }
            return Map.of("export", "done");
        }
    }

    /** WebFlux's endpoint. */
    @RestController
    static class ReactiveEndpoints {

        @GetMapping("/exports")
        Mono<Map<String, String>> export(@RequestHeader(name = "X-Hold", required = false) String hold) {
            Mono<Map<String, String>> done = Mono.just(Map.of("export", "done"));
            return hold == null ? done : Mono.defer(() -> {
                HOLDING.incrementAndGet();
                return Mono.fromFuture(released, true).timeout(HOLD).then(done);
            });
        }
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(ServletEndpoints.class)
    static class ServletApp {
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(ReactiveEndpoints.class)
    static class ReactiveApp {
    }

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final AtomicInteger CLIENTS = new AtomicInteger();
    private static final Map<String, ConfigurableApplicationContext> APPS = new LinkedHashMap<>();

    private static final String[] RULES = {"--server.port=0", "--spring.config.name=http-concurrency-limits",
        "--sluice.web.trusted-proxies=127.0.0.1",
        "--sluice.http.rules[0].name=exports", "--sluice.http.rules[0].path=/exports",
        "--sluice.http.rules[0].key=#ip", "--sluice.http.rules[0].tiers[0].concurrency=2"};

    @BeforeAll
    static void start() {
        APPS.put("servlet", new SpringApplicationBuilder(ServletApp.class)
                .properties("spring.main.web-application-type=servlet").run(RULES));
        APPS.put("reactive", new SpringApplicationBuilder(ReactiveApp.class)
                .properties("spring.main.web-application-type=reactive").run(RULES));
    }

    @AfterAll
    static void stop() {
        released.complete(null);
        APPS.values().forEach(ConfigurableApplicationContext::close);
    }

    /** One client of one application. */
    private record Client(ConfigurableApplicationContext app, String address) {

        static Client of(String stack) {
            return new Client(APPS.get(stack), "198.51.100." + CLIENTS.incrementAndGet());
        }

        HttpRequest request(boolean hold) {
            int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/exports"))
                    .header("X-Forwarded-For", address);
            if (hold) {
                request.header("X-Hold", "yes");
            }
            return request.build();
        }

        CompletableFuture<HttpResponse<String>> sendAsync(boolean hold) {
            return HTTP.sendAsync(request(hold), HttpResponse.BodyHandlers.ofString());
        }

        HttpResponse<String> send() {
            try {
                return HTTP.send(request(false), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"servlet", "reactive"})
    void twoRunAtOnceAndAThirdIsRefusedUntilOneEnds(String stack) throws Exception {
        released = new CompletableFuture<>();
        HOLDING.set(0);
        Client client = Client.of(stack);
        List<CompletableFuture<HttpResponse<String>>> running = List.of(client.sendAsync(true),
                client.sendAsync(true));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (HOLDING.get() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(HOLDING.get()).as("held requests running").isEqualTo(2);

        HttpResponse<String> third = client.send();
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"exports\";q=2;qu=\"concurrent-requests\"");
        assertThat(third.headers().firstValue("RateLimit")).hasValue("\"exports\";r=0");
        assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(third.body()).contains("\"violated-policies\":[\"exports\"]");
        assertThat(Client.of(stack).send().statusCode()).as("another client").isEqualTo(200);

        released.complete(null);
        for (CompletableFuture<HttpResponse<String>> response : running) {
            assertThat(response.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        assertThat(client.send().statusCode()).as("once the two ended").isEqualTo(200);
    }

    /**
     * A hundred requests that would run for seconds, each given up by its client after 50 ms: the
     * permit of each goes back when its connection closes, and the next request is admitted at
     * once (on Spring Boot 3.5, whose server runs such a request on, once it has ended).
     */
    @Test
    void cancelledRequestsGiveTheirPermitsBack() throws Exception {
        released = new CompletableFuture<>();
        Client client = Client.of("reactive");
        for (int i = 0; i < 100; i++) {
            CompletableFuture<HttpResponse<String>> request = client.sendAsync(true);
            HttpResponse<String> answered = request.copy().completeOnTimeout(null, 50, TimeUnit.MILLISECONDS)
                    .get(20, TimeUnit.SECONDS);
            // Refused while the server has yet to learn that two earlier ones were given up; never run to its end.
            assertThat(answered == null ? 0 : answered.statusCode()).as("request %d", i).isIn(0, 429);
            request.cancel(true);
        }
        List<Integer> statuses = new ArrayList<>();
        // Where the server hears of closed connections, at once; where not, once the held requests have ended.
        long deadline = System.nanoTime() + (CLOSED_CONNECTIONS_CANCEL ? 0 : HOLD.plusSeconds(5).toNanos());
        int status;
        do {
            status = client.send().statusCode();
            statuses.add(status);
        } while (status != 200 && System.nanoTime() < deadline);
        assertThat(status).as("statuses until admitted: %s", statuses).isEqualTo(200);
        released.complete(null);
    }
}
