package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.app.LimitedApp;
import dev.sluice.boot.reactiveapp.ReactiveLimitedApp;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * What a client sees when the store is overloaded: a 429 with {@code Retry-After}, the rate-limit
 * headers and a problem saying the store was overloaded, never the 503 of a store that failed,
 * even where limits fail closed; in Spring MVC and WebFlux alike, for annotated methods and
 * {@code sluice.http.rules}.
 */
class StoreOverloadHttpTest {

    private static final AtomicInteger CLIENTS = new AtomicInteger();

    /** The application's store, overloaded while a test runs. */
    @TestConfiguration(proxyBeanMethods = false)
    static class OverloadingStoreConfiguration {

        @Bean
        OverloadingStore overloadingStore() {
            return new OverloadingStore();
        }
    }

    private static String client() {
        return "198.51.100." + CLIENTS.incrementAndGet();
    }

    @Nested
    @SpringBootTest(classes = {LimitedApp.class, OverloadingStoreConfiguration.class},
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {"sluice.web.trusted-proxies=127.0.0.1", "sluice.failure-policy=fail-closed"})
    class SpringMvc {

        @LocalServerPort
        int port;

        @Autowired
        OverloadingStore store;

        @Autowired
        MeterRegistry meters;

        private WebTestClient http;
        private String client;

        @BeforeEach
        void overload() {
            http = LocalServer.client(port);
            client = client();
            store.overloaded.set(true);
        }

        @AfterEach
        void relieve() {
            store.overloaded.set(false);
        }

        private EntityExchangeResult<String> sendOtp() {
            return http.post().uri("/otp").header("X-Forwarded-For", client).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"phone\":\"+15550900\"}").exchange().expectBody(String.class).returnResult();
        }

        @Test
        void aLimitedMethodAnswers429WithRetryAfterAndTheRateLimitHeaders() {
            EntityExchangeResult<String> rejected = sendOtp();

            assertThat(rejected.getStatus().value()).isEqualTo(429);
            HttpHeaders headers = rejected.getResponseHeaders();
            assertThat(headers.getFirst("Retry-After")).as("300 ms, rounded up").isEqualTo("1");
            assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"otp-ip\";q=3;w=60");
            assertThat(headers.getFirst("RateLimit")).isEqualTo("\"otp-ip\";r=0;t=1");
            assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("3");
            assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
            assertThat(headers.getFirst("X-RateLimit-Reset")).isEqualTo("1");
            assertThat(headers.getFirst("Content-Type")).isEqualTo("application/problem+json");
            assertThat(rejected.getResponseBody())
                    .contains("\"status\":429")
                    .contains("\"detail\":\"Rate limit store overloaded\"")
                    .contains("\"violated-policies\":[\"otp-ip\"]")
                    .doesNotContain("Too many codes requested").doesNotContain(client);
        }

        @Test
        void theSameRequestIsAdmittedOnceTheStoreIsNoLongerOverloaded() {
            assertThat(sendOtp().getStatus().value()).isEqualTo(429);
            store.overloaded.set(false);

            assertThat(sendOtp().getStatus().value()).as("nothing was counted while overloaded").isEqualTo(202);
        }

        @Test
        void anAsynchronousMethodAnswers429Too() {
            EntityExchangeResult<String> rejected = http.get().uri("/async/" + client).exchange()
                    .expectBody(String.class).returnResult();

            assertThat(rejected.getStatus().value()).isEqualTo(429);
            assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1");
            assertThat(rejected.getResponseBody()).contains("\"detail\":\"Rate limit store overloaded\"");
        }

        @Test
        void anHttpRuleAnswers429BeforeTheHandlerRuns() {
            int served = LimitedApp.PRODUCT_CALLS.get();

            EntityExchangeResult<String> rejected = http.get().uri("/products/" + client + "/items").exchange()
                    .expectBody(String.class).returnResult();

            assertThat(rejected.getStatus().value()).isEqualTo(429);
            assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1");
            assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"product-api\";q=3;w=60");
            assertThat(rejected.getResponseBody()).contains("\"detail\":\"Rate limit store overloaded\"")
                    .contains("\"violated-policies\":[\"product-api\"]");
            assertThat(LimitedApp.PRODUCT_CALLS.get()).isEqualTo(served);
        }

        @Test
        void metricsCountTheCallAsOverloadedNotAsRejectedNorAsAStoreFailure() {
            double overloaded = decisions("otp-ip", "overloaded");
            double rejected = decisions("otp-ip", "rejected");
            double errors = decisions("otp-ip", "error");

            sendOtp();

            assertThat(decisions("otp-ip", "overloaded") - overloaded).isEqualTo(1);
            assertThat(decisions("otp-ip", "rejected")).isEqualTo(rejected);
            assertThat(decisions("otp-ip", "error")).isEqualTo(errors);
            assertThat(meters.get("sluice.store.queue").gauge().value()).isEqualTo(OverloadingStore.CAPACITY);
            assertThat(meters.get("sluice.store.overloaded").functionCounter().count()).isPositive();
        }

        @Test
        void theActuatorEndpointShowsTheStoresQueue() {
            sendOtp();

            assertThat(http.get().uri("/actuator/ratelimits").exchange().expectBody(String.class).returnResult().getResponseBody())
                    .contains("\"name\":\"otp-ip\"")
                    .contains("\"storeState\":null,\"storeQueue\":{\"queued\":20000,\"capacity\":20000,\"overloaded\":");
        }

        private double decisions(String limiter, String outcome) {
            Counter counter = meters.find("sluice.decisions").tag("limiter", limiter).tag("outcome", outcome).counter();
            return counter == null ? 0 : counter.count();
        }
    }

    @Nested
    @SpringBootTest(classes = {ReactiveLimitedApp.class, OverloadingStoreConfiguration.class},
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {"spring.config.name=reactive", "sluice.web.trusted-proxies=127.0.0.1",
                "sluice.failure-policy=fail-closed"})
    class WebFlux {

        @LocalServerPort
        int port;

        @Autowired
        OverloadingStore store;

        private WebTestClient http;
        private String client;

        @BeforeEach
        void overload() {
            http = LocalServer.client(port);
            client = client();
            store.overloaded.set(true);
        }

        @AfterEach
        void relieve() {
            store.overloaded.set(false);
        }

        @Test
        void aLimitedMethodAnswers429WithRetryAfterAndTheRateLimitHeaders() {
            http.post().uri("/otp").header("X-Forwarded-For", client).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"phone\":\"+15550901\"}").exchange()
                    .expectStatus().isEqualTo(429)
                    .expectHeader().valueEquals("Retry-After", "1")
                    .expectHeader().valueEquals("RateLimit-Policy", "\"otp-ip\";q=3;w=60")
                    .expectHeader().valueEquals("RateLimit", "\"otp-ip\";r=0;t=1")
                    .expectHeader().valueEquals("X-RateLimit-Remaining", "0")
                    .expectBody()
                    .jsonPath("$.status").isEqualTo(429)
                    .jsonPath("$.detail").isEqualTo("Rate limit store overloaded")
                    .jsonPath("$['violated-policies'][0]").isEqualTo("otp-ip");
        }

        @Test
        void anHttpRuleAnswers429BeforeTheHandlerRuns() {
            int served = ReactiveLimitedApp.PRODUCT_CALLS.get();

            http.get().uri("/products/" + client + "/items").exchange()
                    .expectStatus().isEqualTo(429)
                    .expectHeader().valueEquals("Retry-After", "1")
                    .expectBody().jsonPath("$.detail").isEqualTo("Rate limit store overloaded");
            assertThat(ReactiveLimitedApp.PRODUCT_CALLS.get()).isEqualTo(served);
        }
    }
}
