package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.boot.app.LimitedApp;
import dev.sluice.boot.reactiveapp.ReactiveLimitedApp;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * The servlet and the WebFlux test applications, run side by side on the same clock, give
 * byte-for-byte the same answers to the same requests: status, problem body and rate-limit
 * headers of admitted calls, 429s (annotated methods and HTTP rules), 400s and 503s.
 */
class SameAnswersOnBothStacksTest {

    /** The headers Sluice writes, and the content type of its answers. */
    private static final List<String> HEADERS = List.of("Content-Type", "Retry-After", "RateLimit-Policy", "RateLimit",
            "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");

    private static ConfigurableApplicationContext servlet;
    private static ConfigurableApplicationContext reactive;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** The store of both applications, failing for keys naming an unreachable organization. */
    @Configuration(proxyBeanMethods = false)
    static class PartlyUnreachableStore {

        @Bean
        RateLimitStore partlyUnreachableStore(MutableClock clock) {
            InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
            return new RateLimitStore() {
                @Override
                public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                    if (key.contains("unreachable")) {
                        throw new StoreUnavailableException("the store cannot be reached", Duration.ofSeconds(1));
                    }
                    return memory.tryAcquire(key, tiers, cost);
                }

                @Override
                public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                    if (key.contains("unreachable")) {
                        return CompletableFuture.failedFuture(new StoreUnavailableException("the store cannot be reached", Duration.ofSeconds(1)));
                    }
                    return memory.tryAcquireAsync(key, tiers, cost);
                }
            };
        }
    }

    @BeforeAll
    static void start() {
        String[] arguments = {"--server.port=0", "--sluice.web.trusted-proxies=127.0.0.1",
            "--sluice.failure-policy=fail-closed"};
        servlet = new SpringApplicationBuilder(LimitedApp.class, PartlyUnreachableStore.class).run(arguments);
        reactive = new SpringApplicationBuilder(ReactiveLimitedApp.class, PartlyUnreachableStore.class)
                .properties("spring.config.name=reactive").run(arguments);
    }

    @AfterAll
    static void stop() {
        servlet.close();
        reactive.close();
    }

    @Test
    void oneApplicationIsServletTheOtherReactive() {
        assertThat(servlet.getBeanNamesForType(DispatcherServlet.class)).isNotEmpty();
        assertThat(servlet.getBeanNamesForType(DispatcherHandler.class)).isEmpty();
        assertThat(reactive.getBeanNamesForType(DispatcherHandler.class)).isNotEmpty();
        assertThat(new SpringApplication(Object.class).getWebApplicationType()).as("both stacks on the class path: Spring MVC")
                .isEqualTo(WebApplicationType.SERVLET);
    }

    @Test
    void codesByIpAdmittedThenRejected() {
        for (int i = 0; i < 5; i++) {
            assertSameAnswers(new Call("POST", "/otp", "{\"phone\":\"+1555090" + i + "\"}"), i < 3 ? 202 : 429);
        }
    }

    @Test
    void tiersOfTwoLimitersOnOneMethod() {
        assertSameAnswers(new Call("GET", "/bursts/same", null), 200);
        assertSameAnswers(new Call("GET", "/bursts/same", null), 429);
    }

    @Test
    void aRequestWithoutItsKey() {
        assertSameAnswers(new Call("GET", "/keyed", null), 400);
    }

    @Test
    void aRule() {
        for (int i = 0; i < 4; i++) {
            assertSameAnswers(new Call("GET", "/products/same/items", null), i < 3 ? 200 : 429);
        }
    }

    @Test
    void aStoreThatCannotDecideUnderFailClosed() {
        assertSameAnswers(new Call("GET", "/orgs/unreachable", null), 503);
    }

    /** A request, from the client 192.0.2.90 behind the trusted local proxy. */
    private record Call(String method, String path, String json) {

        HttpRequest to(ConfigurableApplicationContext app) {
            int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .header("X-Forwarded-For", "192.0.2.90");
            if (json == null) {
                return request.method(method, HttpRequest.BodyPublishers.noBody()).build();
            }
            return request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(json)).build();
        }
    }

    /** What an application answered: its status, Sluice's headers and the body. */
    private record Answer(int status, Map<String, List<String>> headers, String body) {
    }

    /** Sends the request to both applications and compares what they answer. */
    private static void assertSameAnswers(Call call, int status) {
        Answer fromServlet = send(call, servlet);
        Answer fromReactive = send(call, reactive);
        assertThat(fromServlet.status).as("Spring MVC's status").isEqualTo(status);
        assertThat(fromServlet.headers.get(status == 503 || status == 400 ? "Content-Type" : "RateLimit"))
                .as("what the answers are compared by").isNotEmpty();
        assertThat(fromServlet.headers.get("Retry-After")).as("Retry-After").hasSize(status >= 429 ? 1 : 0);
        assertThat(fromReactive).as("WebFlux's answer to " + call + ", against Spring MVC's").isEqualTo(fromServlet);
    }

    private static Answer send(Call call, ConfigurableApplicationContext app) {
        HttpResponse<String> response;
        try {
            response = HTTP.send(call.to(app), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : HEADERS) {
            headers.put(name, response.headers().allValues(name));
        }
        return new Answer(response.statusCode(), headers, response.body());
    }
}
