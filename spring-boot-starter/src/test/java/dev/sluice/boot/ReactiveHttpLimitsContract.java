package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.boot.reactiveapp.ReactiveLimitedApp;
import dev.sluice.boot.web.reactive.ReactiveRateLimitExceptionHandler;
import dev.sluice.boot.web.servlet.RateLimitExceptionHandler;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.DispatcherHandler;

/**
 * What a client of a limited WebFlux application sees, over real HTTP on a random port: the same
 * answers as a Spring MVC application gives ({@link HttpLimitsContract}), with every store. Each
 * test poses as another client behind the trusted local proxy. The limits of {@code org-reads},
 * {@code switched-off} and the rule {@code product-api} are set in {@code reactive.properties}.
 */
@SpringBootTest(classes = ReactiveLimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.config.name=reactive", "sluice.web.trusted-proxies=127.0.0.1"})
abstract class ReactiveHttpLimitsContract {

    /** The 429 body of the OTP endpoint, as Spring MVC writes it too; compare it with {@link #json}. */
    static final String OTP_REJECTION = "{\"detail\":\"Too many codes requested\",\"instance\":\"/otp\",\"status\":429,"
            + "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\","
            + "\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"violated-policies\":[\"otp-ip\"]}";

    private static final AtomicInteger CLIENTS = new AtomicInteger();

    /**
     * A JSON document, to compare by content: Spring Boot 3.5 writes members in the order they are
     * declared, Spring Boot 4 in alphabetical order.
     */
    static JsonNode json(String document) {
        try {
            return new ObjectMapper().readTree(document);
        } catch (JsonProcessingException e) {
            throw new AssertionError("not JSON: " + document, e);
        }
    }

    @LocalServerPort
    private int port;

    @Autowired
    private MeterRegistry meters;

    @Autowired
    private ApplicationContext context;

    /** A client address of this test's own. */
    private String client;
    private WebTestClient http;

    @BeforeEach
    void newClient() {
        client = "198.51.100." + CLIENTS.incrementAndGet();
        http = LocalServer.client(port);
    }

    private EntityExchangeResult<String> sendOtp(String phone) {
        return http.post().uri("/otp").header("X-Forwarded-For", client).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"phone\":\"" + phone + "\"}").exchange().expectBody(String.class).returnResult();
    }

    private EntityExchangeResult<String> get(String path) {
        return http.get().uri(path).exchange().expectBody(String.class).returnResult();
    }

    @Test
    void theApplicationIsAWebFluxOne() {
        assertThat(context.getBeanNamesForType(DispatcherHandler.class)).isNotEmpty();
        assertThat(context.getBeanNamesForType(RateLimitExceptionHandler.class)).isEmpty();
        assertThat(context.getBeanNamesForType(ReactiveRateLimitExceptionHandler.class)).hasSize(1);
    }

    @Test
    void admittedCallsCarryTheRateLimitHeadersOfEveryLimiter() {
        EntityExchangeResult<String> first = sendOtp("+15550100");

        assertThat(first.getStatus().value()).isEqualTo(202);
        assertThat(first.getResponseBody()).isEqualTo("{\"status\":\"sent\"}");
        assertThat(first.getResponseHeaders().getFirst("RateLimit-Policy"))
                .isEqualTo("\"otp-ip\";q=3;w=60, \"otp-phone\";q=10;w=3600");
        assertThat(first.getResponseHeaders().getFirst("RateLimit"))
                .matches("\"otp-ip\";r=2;t=\\d+, \"otp-phone\";r=9;t=\\d+");
        assertThat(first.getResponseHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("3");
        assertThat(first.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("2");
        assertThat(first.getResponseHeaders().getFirst("X-RateLimit-Reset")).matches("\\d+");
        assertThat(first.getResponseHeaders().get("Retry-After")).as("admitted").isNull();
    }

    @Test
    void theFourthCodeFromOneAddressIsA429WithEveryHeaderAndAProblemBody() {
        for (int i = 0; i < 3; i++) {
            assertThat(sendOtp("+1555020" + i).getStatus().value()).isEqualTo(202);
        }
        EntityExchangeResult<String> rejected = sendOtp("+15550299");

        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("Content-Type")).isEqualTo("application/problem+json");
        assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isEqualTo("900");
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"otp-ip\";q=3;w=60");
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit")).isEqualTo("\"otp-ip\";r=0;t=900");
        assertThat(rejected.getResponseHeaders().getFirst("X-RateLimit-Limit")).isEqualTo("3");
        assertThat(rejected.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(rejected.getResponseHeaders().getFirst("X-RateLimit-Reset")).isEqualTo("900");
        assertThat(json(rejected.getResponseBody())).isEqualTo(json(OTP_REJECTION));

        String otherClient = client + "0";
        assertThat(http.post().uri("/otp").header("X-Forwarded-For", otherClient)
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"phone\":\"+15550298\"}").exchange()
                .expectBody(String.class).returnResult().getStatus().value())
                .as("another client behind the same proxy").isEqualTo(202);
    }

    @Test
    void a429GivesEveryPolicyTheWindowOfItsBindingTierAndNoEffectiveWindowBeyondRetryAfter() {
        String path = "/bursts/" + client;
        assertThat(get(path).getStatus().value()).isEqualTo(200);
        EntityExchangeResult<String> rejected = get(path);

        assertThat(rejected.getStatus().value()).isEqualTo(429);
        long retryAfter = Long.parseLong(rejected.getResponseHeaders().getFirst("Retry-After"));
        Map<String, Map<String, Object>> policies = structuredList(rejected.getResponseHeaders().getFirst("RateLimit-Policy"));
        assertThat(policies).containsExactly(entry("daily", Map.of("q", 100L, "w", 86_400L)),
                entry("burst", Map.of("q", 1L, "w", 1L)));
        Map<String, Map<String, Object>> limits = structuredList(rejected.getResponseHeaders().getFirst("RateLimit"));
        assertThat(limits.get("burst")).as("the rejecting policy").isEqualTo(Map.of("r", 0L, "t", retryAfter));
        assertThat(limits.get("daily")).as("asked first, it counted both calls").containsEntry("r", 98L);
        assertThat(limits.values()).allSatisfy(limit -> assertThat((Long) limit.get("t")).isBetween(0L, retryAfter));
    }

    @Test
    void aFluxIsDecidedOnceBeforeItsFirstValueAndCarriesTheHeaders() {
        String path = "/stream/" + client;
        EntityExchangeResult<String> first = get(path);
        assertThat(first.getStatus().value()).isEqualTo(200);
        assertThat(first.getResponseBody()).isEqualTo("abc");
        assertThat(first.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"stream-reads\";q=2;w=60");
        assertThat(first.getResponseHeaders().getFirst("RateLimit")).matches("\"stream-reads\";r=1;t=\\d+");
        assertThat((Long) structuredList(first.getResponseHeaders().getFirst("RateLimit")).get("stream-reads").get("t"))
                .as("the default sliding window: the rest of this minute and the next").isBetween(61L, 120L);

        assertThat(get(path).getResponseHeaders().getFirst("RateLimit")).matches("\"stream-reads\";r=0;t=\\d+");
        EntityExchangeResult<String> rejected = get(path);
        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit"))
                .isEqualTo("\"stream-reads\";r=0;t=" + rejected.getResponseHeaders().getFirst("Retry-After"));
        assertThat(rejected.getResponseBody()).contains("\"violated-policies\":[\"stream-reads\"]");
    }

    /** The members of a structured-field list of strings, by name, with their parameters, parsed as RFC 9651 says. */
    private static Map<String, Map<String, Object>> structuredList(String field) {
        Map<String, Map<String, Object>> members = new LinkedHashMap<>();
        for (ListElement<?> member : Parser.parseList(field).get()) {
            assertThat(member).isInstanceOf(StringItem.class);
            Map<String, Object> parameters = new LinkedHashMap<>();
            member.getParams().forEach((name, value) -> parameters.put(name, value.get()));
            members.put(((StringItem) member).get(), parameters);
        }
        return members;
    }

    @Test
    void aRequestWithoutWhatItsLimitIsCountedByIsABadRequest() {
        double errorsBefore = keyErrors("api-key");
        EntityExchangeResult<String> withoutKey = get("/keyed");

        assertThat(withoutKey.getStatus().value()).isEqualTo(400);
        assertThat(withoutKey.getResponseHeaders().getFirst("Content-Type")).isEqualTo("application/problem+json");
        JsonNode problem = json(withoutKey.getResponseBody());
        // Spring Framework 6.2 writes the default type, about:blank; 7 leaves it out, which means the same.
        assertThat(problem.path("type").asText("about:blank")).isEqualTo("about:blank");
        JsonNode withoutType = ((ObjectNode) problem).without("type");
        assertThat(withoutType).isEqualTo(json("{\"detail\":\"This request lacks what its"
                + " rate limit is counted by.\",\"instance\":\"/keyed\",\"status\":400,\"title\":\"Bad Request\"}"));
        assertThat(keyErrors("api-key") - errorsBefore).isEqualTo(1);
        assertThat(http.get().uri("/keyed").header("X-Api-Key", client).exchange().expectBody(String.class)
                .returnResult().getStatus().value()).isEqualTo(200);
    }

    private double keyErrors(String limiter) {
        var counter = meters.find("sluice.key.errors").tag("limiter", limiter).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void configurationOverridesTheAnnotationAndTurnsLimitersOff() {
        String org = "/orgs/" + client;
        assertThat(get(org).getStatus().value()).isEqualTo(200);
        assertThat(get(org).getStatus().value()).isEqualTo(200);
        EntityExchangeResult<String> third = get(org);
        assertThat(third.getStatus().value()).isEqualTo(429);
        assertThat(third.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"org-reads\";q=2;w=60");

        for (int i = 0; i < 3; i++) {
            assertThat(get("/switched-off").getStatus().value()).isEqualTo(200);
        }
    }

    private EntityExchangeResult<String> products(String org, String plan) {
        var request = http.get().uri("/products/" + org + "/items");
        return (plan == null ? request : request.header("X-Plan", plan)).exchange().expectBody(String.class)
                .returnResult();
    }

    @Test
    void aConfiguredRuleLimitsRequestsBeforeTheHandlerRunsWithTheSameAnswersAsAnAnnotation() {
        String org = "org-" + client;
        int served = ReactiveLimitedApp.PRODUCT_CALLS.get();
        for (int i = 0; i < 3; i++) {
            EntityExchangeResult<String> admitted = products(org, null);
            assertThat(admitted.getStatus().value()).isEqualTo(200);
            assertThat(admitted.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"product-api\";q=3;w=60");
            assertThat(admitted.getResponseHeaders().getFirst("RateLimit")).startsWith("\"product-api\";r=" + (2 - i) + ";t=");
        }
        EntityExchangeResult<String> rejected = products(org, null);

        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(ReactiveLimitedApp.PRODUCT_CALLS.get() - served).as("requests the handler served").isEqualTo(3);
        assertThat(rejected.getResponseHeaders().getFirst("Content-Type")).isEqualTo("application/problem+json");
        assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).matches("\\d+");
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"product-api\";q=3;w=60");
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit")).isEqualTo("\"product-api\";r=0;t="
                + rejected.getResponseHeaders().getFirst("Retry-After"));
        assertThat(rejected.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(json(rejected.getResponseBody())).isEqualTo(json("{\"detail\":\"Rate limit exceeded\",\"instance\":"
                + "\"/products/" + org + "/items\",\"status\":429,\"title\":\"Request cannot be satisfied as assigned"
                + " quota has been exceeded\",\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
                + "\"violated-policies\":[\"product-api\"]}"));
        assertThat(products("other-" + client, null).getStatus().value()).as("another organization").isEqualTo(200);
        assertThat(count("product-api", "rejected")).isPositive();
        assertThat(get("/actuator/ratelimits").getResponseBody()).contains("{\"name\":\"product-api\",\"tiers\":[{"
                + "\"limit\":3,\"window\":\"PT1M\",\"algorithm\":\"SLIDING_LOG\",\"countRejected\":false,"
                + "\"blockFor\":\"PT0S\"}],\"plans\":{\"gold\":[{\"limit\":5,");
    }

    @Test
    void aRuleCountsOnlyTheMethodsItNames() {
        String org = "org-" + client;
        for (int i = 0; i < 5; i++) {
            assertThat(http.post().uri("/products/" + org + "/items").exchange().expectBody(String.class)
                    .returnResult().getStatus().value()).as("no POST handler, and no limit on POST").isEqualTo(405);
        }
        assertThat(products(org, null).getStatus().value()).isEqualTo(200);
    }

    @Test
    void anOrganizationUpgradedMidWindowKeepsWhatItUsedAndGetsTheDifference() {
        String org = "org-" + client;
        for (int i = 0; i < 3; i++) {
            assertThat(products(org, null).getStatus().value()).isEqualTo(200);
        }
        assertThat(products(org, null).getStatus().value()).isEqualTo(429);

        EntityExchangeResult<String> upgraded = products(org, "gold");
        assertThat(upgraded.getStatus().value()).isEqualTo(200);
        assertThat(upgraded.getResponseHeaders().getFirst("RateLimit-Policy")).as("the tiers applied")
                .isEqualTo("\"product-api\";q=5;w=60");
        assertThat(upgraded.getResponseHeaders().getFirst("RateLimit")).startsWith("\"product-api\";r=1;");
        assertThat(products(org, "gold").getStatus().value()).isEqualTo(200);
        EntityExchangeResult<String> spent = products(org, "gold");
        assertThat(spent.getStatus().value()).isEqualTo(429);
        assertThat(spent.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"product-api\";q=5;w=60");
    }

    @Test
    void metricsAndTheActuatorEndpointCountDecisions() {
        double allowedBefore = count("otp-ip", "allowed");
        double rejectedBefore = count("otp-ip", "rejected");
        for (int i = 0; i < 4; i++) {
            sendOtp("+1555030" + i);
        }

        assertThat(count("otp-ip", "allowed") - allowedBefore).isEqualTo(3);
        assertThat(count("otp-ip", "rejected") - rejectedBefore).isEqualTo(1);
        assertThat(meters.get("sluice.store.latency").timer().count()).isPositive();

        EntityExchangeResult<String> endpoint = get("/actuator/ratelimits");
        assertThat(endpoint.getStatus().value()).isEqualTo(200);
        assertThat(endpoint.getResponseBody())
                .contains("{\"name\":\"otp-ip\",\"tiers\":[{\"limit\":3,\"window\":\"PT1M\",\"algorithm\":\"SLIDING_LOG\","
                        + "\"countRejected\":false,\"blockFor\":\"PT15M\"}],\"plans\":{},\"store\":\"" + storeName() + "\",\"storeState\":"
                        + storeState() + ",\"storeQueue\":")
                .contains(",\"failurePolicy\":\"LOCAL_FALLBACK\",\"allowed\":")
                .contains("\"name\":\"org-reads\",\"tiers\":[{\"limit\":2,\"window\":\"PT1M\"")
                .contains("\"name\":\"product-api\"")
                .contains("\"name\":\"stream-reads\"");
    }

    private double count(String limiter, String outcome) {
        var counter = meters.find("sluice.decisions").tag("limiter", limiter).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    /** The simple name of the store class the application uses. */
    abstract String storeName();

    /** The state of the store's circuit breaker as JSON: {@code null} for a store without one. */
    abstract String storeState();
}
