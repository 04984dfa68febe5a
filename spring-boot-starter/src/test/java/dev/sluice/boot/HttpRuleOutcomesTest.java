package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.tck.MutableClock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * HTTP rules that decide only some requests ({@code condition}) and count requests by their
 * outcome ({@code count-on}), on Spring MVC (Tomcat) and WebFlux (Netty), each application on a
 * clock of its own that only the tests move. Each test poses as another client behind the
 * trusted local proxy.
 *
 * <ul>
 *   <li>{@code login}, {@code POST /login}: 5 failed logins per 15 minutes per address
 *       ({@code count-on: 401}). Spring MVC answers a failure with a 401 entity; WebFlux with a
 *       {@code ResponseStatusException}, which escapes the filter chain and is answered after it.
 *   <li>{@code login-later}, {@code POST /login-later}: the same, answered on another thread
 *       (an asynchronous servlet request; a {@code Mono} completed on another scheduler).
 *   <li>{@code reports}, {@code GET /reports}: 2 server errors per minute
 *       ({@code count-on: 5xx}); a failing report throws, and the exception escapes the handler.
 *   <li>{@code search}, {@code GET /search}: 2 per minute, except requests with
 *       {@code X-Internal}, which it does not decide ({@code condition}).
 * </ul>
 */
class HttpRuleOutcomesTest {

    /** Spring MVC's endpoints. */
    @RestController
    static class ServletEndpoints {

        @PostMapping("/login")
        ResponseEntity<Map<String, String>> login(@RequestHeader("X-Password") String password) {
            return answer(password);
        }

        @PostMapping("/login-later")
        CompletableFuture<ResponseEntity<Map<String, String>>> loginLater(@RequestHeader("X-Password") String password) {
            return CompletableFuture.supplyAsync(() -> answer(password));
        }

        @GetMapping("/reports")
        Map<String, String> reports(@RequestHeader(name = "X-Fail", required = false) String fail) {
            return report(fail);
        }

        @GetMapping("/search")
        Map<String, String> search() {
            return Map.of("found", "yes");
        }
    }

    /** WebFlux's endpoints. */
    @RestController
    static class ReactiveEndpoints {

        @PostMapping("/login")
        Mono<Map<String, String>> login(@RequestHeader("X-Password") String password) {
            return password.equals("right") ? Mono.just(Map.of("login", "ok"))
                    : Mono.error(new ResponseStatusException(HttpStatus.UNAUTHORIZED));
        }

        @PostMapping("/login-later")
        Mono<ResponseEntity<Map<String, String>>> loginLater(@RequestHeader("X-Password") String password) {
            return Mono.fromCallable(() -> answer(password)).subscribeOn(Schedulers.boundedElastic());
        }

        @GetMapping("/reports")
        Mono<Map<String, String>> reports(@RequestHeader(name = "X-Fail", required = false) String fail) {
            return Mono.fromCallable(() -> report(fail));
        }

        @GetMapping("/search")
        Mono<Map<String, String>> search() {
            return Mono.just(Map.of("found", "yes"));
        }
    }

    private static ResponseEntity<Map<String, String>> answer(String password) {
        return password.equals("right") ? ResponseEntity.ok(Map.of("login", "ok"))
                : ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("login", "failed"));
    }

    private static Map<String, String> report(String fail) {
        if (fail != null) {
            throw new IllegalStateException("the report failed");
        }
        return Map.of("report", "ready");
    }

    /** Each application's clock, standing still until a test moves it. */
    static class Clock {
        @Bean
        MutableClock clock() {
            return new MutableClock(Instant.parse("2200-01-01T00:00:00Z"));
        }
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ServletEndpoints.class, Clock.class})
    static class ServletApp {
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ReactiveEndpoints.class, Clock.class})
    static class ReactiveApp {
    }

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final AtomicInteger CLIENTS = new AtomicInteger();
    private static final Map<String, ConfigurableApplicationContext> APPS = new LinkedHashMap<>();

    /** The rules of both applications; the condition reads a header of the stack's own request type. */
    private static String[] rules(String internalRequest) {
        return new String[] {"--server.port=0", "--spring.config.name=http-rule-outcomes",
            "--sluice.web.trusted-proxies=127.0.0.1",
            "--sluice.http.rules[0].name=login", "--sluice.http.rules[0].path=/login",
            "--sluice.http.rules[0].methods=POST", "--sluice.http.rules[0].key=#ip",
            "--sluice.http.rules[0].count-on=401", "--sluice.http.rules[0].tiers[0].limit=5",
            "--sluice.http.rules[0].tiers[0].window=15m", "--sluice.http.rules[0].tiers[0].algorithm=sliding-log",
            "--sluice.http.rules[1].name=login-later", "--sluice.http.rules[1].path=/login-later",
            "--sluice.http.rules[1].key=#ip", "--sluice.http.rules[1].count-on=401",
            "--sluice.http.rules[1].tiers[0].limit=5", "--sluice.http.rules[1].tiers[0].window=15m",
            "--sluice.http.rules[1].tiers[0].algorithm=sliding-log",
            "--sluice.http.rules[2].name=reports", "--sluice.http.rules[2].path=/reports",
            "--sluice.http.rules[2].key=#ip", "--sluice.http.rules[2].count-on=5xx",
            "--sluice.http.rules[2].tiers[0].limit=2", "--sluice.http.rules[2].tiers[0].window=1m",
            "--sluice.http.rules[2].tiers[0].algorithm=sliding-log",
            "--sluice.http.rules[3].name=search", "--sluice.http.rules[3].path=/search",
            "--sluice.http.rules[3].key=#ip", "--sluice.http.rules[3].condition=" + internalRequest + " == null",
            "--sluice.http.rules[3].tiers[0].limit=2", "--sluice.http.rules[3].tiers[0].window=1m",
            "--sluice.http.rules[3].tiers[0].algorithm=sliding-log"};
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
            int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
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

        int login(String path, String password) {
            return send("POST", path, "X-Password", password).statusCode();
        }

        MutableClock clock() {
            return app.getBean(MutableClock.class);
        }
    }

    /**
     * Successful logins are never limited; failed ones are, and the sixth within 15 minutes is
     * refused, as is any login from that address until the first failure is 15 minutes old.
     * Successes come between failures, but never right after a failure that brings the address
     * to one below its limit: a success's permit, given back once it is answered, may still be
     * on its way when the next request is decided.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"servlet, /login", "servlet, /login-later", "reactive, /login", "reactive, /login-later"})
    void failedLoginsCountAndSuccessfulOnesDoNot(String stack, String path) {
        Client client = Client.of(stack);
        for (int i = 0; i < 10; i++) {
            assertThat(client.login(path, "right")).as("success %d", i + 1).isEqualTo(200);
        }
        List<String> attempts = List.of("wrong", "right", "right", "wrong", "wrong", "right", "right", "right",
                "wrong", "wrong");
        for (String password : attempts) {
            assertThat(client.login(path, password)).as("%s password, within the limit", password)
                    .isEqualTo(password.equals("right") ? 200 : 401);
        }

        HttpResponse<String> sixth = client.send("POST", path, "X-Password", "wrong");
        assertThat(sixth.statusCode()).as("the sixth failure").isEqualTo(429);
        assertThat(sixth.headers().firstValue("RateLimit-Policy")).hasValue("\"" + path.substring(1) + "\";q=5;w=900");
        assertThat(sixth.body()).contains("\"violated-policies\":[\"" + path.substring(1) + "\"]");
        assertThat(client.login(path, "right")).as("a success from an address at its limit").isEqualTo(429);
        assertThat(Client.of(stack).login(path, "wrong")).as("another address").isEqualTo(401);

        client.clock().advance(Duration.ofMinutes(15));
        assertThat(client.login(path, "right")).as("15 minutes after the first failure").isEqualTo(200);
        assertThat(client.login(path, "wrong")).isEqualTo(401);
    }

    /**
     * An exception escaping the handler is a server error, counted by {@code count-on: 5xx}, with
     * the status the client gets.
     */
    @ParameterizedTest
    @ValueSource(strings = {"servlet", "reactive"})
    void anExceptionEscapingTheHandlerCountsAsAServerError(String stack) {
        Client client = Client.of(stack);
        for (int i = 0; i < 5; i++) {
            assertThat(client.send("GET", "/reports").statusCode()).isEqualTo(200);
        }
        assertThat(client.send("GET", "/reports", "X-Fail", "yes").statusCode()).isEqualTo(500);
        assertThat(client.send("GET", "/reports").statusCode()).isEqualTo(200);
        assertThat(client.send("GET", "/reports", "X-Fail", "yes").statusCode()).isEqualTo(500);

        HttpResponse<String> third = client.send("GET", "/reports", "X-Fail", "yes");
        assertThat(third.statusCode()).as("the third failure").isEqualTo(429);
        assertThat(third.body()).contains("\"violated-policies\":[\"reports\"]");
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
