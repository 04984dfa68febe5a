package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * HTTP rules that decide only some requests ({@code condition}), on Spring MVC (Tomcat) and
 * WebFlux (Netty). Each test poses as another client behind the trusted local proxy.
 *
 * <ul>
 *   <li>{@code search}, {@code GET /search}: 2 per minute, except requests with
 *       {@code X-Internal}, which it does not decide ({@code condition}).
 * </ul>
 */
class HttpRuleOutcomesTest {

    /** Spring MVC's endpoints. */
    @RestController
    static class ServletEndpoints {

        @GetMapping("/search")
        Map<String, String> search() {
            return Map.of("found", "yes");
        }
    }

    /** WebFlux's endpoints. */
    @RestController
    static class ReactiveEndpoints {

        @GetMapping("/search")
        Mono<Map<String, String>> search() {
            return Mono.just(Map.of("found", "yes"));
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

    /** The rules of both applications; the condition reads a header of the stack's own request type. */
    private static String[] rules(String internalRequest) {
        return new String[] {"--server.port=0", "--spring.config.name=http-rule-outcomes",
            "--sluice.web.trusted-proxies=127.0.0.1",
            "--sluice.http.rules[0].name=search", "--sluice.http.rules[0].path=/search",
            "--sluice.http.rules[0].key=#ip", "--sluice.http.rules[0].condition=" + internalRequest + " == null",
            "--sluice.http.rules[0].tiers[0].limit=2", "--sluice.http.rules[0].tiers[0].window=1m",
            "--sluice.http.rules[0].tiers[0].algorithm=sliding-log"};
    }

    @BeforeAll
    static void start() {
        APPS.put("servlet", new SpringApplicationBuilder(ServletApp.class)
                .properties("spring.main.web-application-type=servlet")
                .run(rules("#request.getHeader('X-Internal')")));
        APPS.put("reactive", new SpringApplicationBuilder(ReactiveApp.class)
                .properties("spring.main.web-application-type=reactive")
                .run(rules("#request.headers.getFirst('X-Internal')")));
    }

    @AfterAll
    static void stop() {
        APPS.values().forEach(ConfigurableApplicationContext::close);
    }

    /** One client of one application. */
    private record Client(ConfigurableApplicationContext app, String address) {

        static Client of(String stack) {
            return new Client(APPS.get(stack), "198.51.100." + CLIENTS.incrementAndGet());
        }

        HttpResponse<String> send(String method, String path, String... headers) {
            int port = ((WebServerApplicationContext) app).getWebServer().getPort();
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .header("X-Forwarded-For", address)
                    .method(method, HttpRequest.BodyPublishers.noBody());
            if (headers.length > 0) {
                request.headers(headers);
            }
            try {
                return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Requests for which the condition is false are neither limited nor counted, and carry no headers of the rule. */
    @ParameterizedTest
    @ValueSource(strings = {"servlet", "reactive"})
    void aRuleDoesNotDecideTheRequestsItsConditionLeavesOut(String stack) {
        Client client = Client.of(stack);
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> internal = client.send("GET", "/search", "X-Internal", "yes");
            assertThat(internal.statusCode()).as("internal request %d", i + 1).isEqualTo(200);
            assertThat(internal.headers().firstValue("RateLimit-Policy")).as("not decided by the rule").isEmpty();
        }
        HttpResponse<String> first = client.send("GET", "/search");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("RateLimit")).as("the internal requests were not counted")
                .hasValueSatisfying(value -> assertThat(value).startsWith("\"search\";r=1;"));
        assertThat(client.send("GET", "/search").statusCode()).isEqualTo(200);
        assertThat(client.send("GET", "/search").statusCode()).isEqualTo(429);
        assertThat(client.send("GET", "/search", "X-Internal", "yes").statusCode())
                .as("an internal request once the address is at its limit").isEqualTo(200);
    }
}
