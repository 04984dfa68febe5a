package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.app.LimitedApp;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * An operator unblocks a caller and changes limits over HTTP, with the endpoint's write
 * operations granted ({@code management.endpoint.ratelimits.access=unrestricted}); every store
 * must give the same answers. The {@code otp-ip} limiter of {@link LimitedApp} blocks an address
 * for 15 minutes after its fourth code within a minute; the {@code product-api} rule of its
 * application.properties admits 3 requests a minute per organization.
 */
@SpringBootTest(classes = LimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"sluice.web.trusted-proxies=127.0.0.1", "management.endpoint.ratelimits.access=unrestricted",
            "sluice.top-keys.mask-secret=" + HttpOperationsContract.MASK_SECRET})
abstract class HttpOperationsContract {

    static final String MASK_SECRET = "a secret of more than sixteen bytes";

    private static final AtomicInteger CLIENTS = new AtomicInteger();

    @LocalServerPort
    private int port;

    private WebTestClient http;

    @BeforeEach
    void connect() {
        http = LocalServer.client(port);
    }

    /** An IPv4 address of this test's own. */
    static String newClient() {
        return "203.0.113." + CLIENTS.incrementAndGet();
    }

    static EntityExchangeResult<String> sendOtp(WebTestClient http, String client) {
        return http.post().uri("/otp").header("X-Forwarded-For", client).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"phone\":\"+1555" + client.replaceAll("\\D", "") + "\"}").exchange()
                .expectBody(String.class).returnResult();
    }

    /** Asks for codes from one address until it is blocked. */
    static void block(WebTestClient http, String client) {
        for (int i = 0; i < 3; i++) {
            assertThat(sendOtp(http, client).getStatus().value()).isEqualTo(202);
        }
        EntityExchangeResult<String> rejected = sendOtp(http, client);
        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isEqualTo("900");
    }

    private EntityExchangeResult<String> delete(String path) {
        return http.delete().uri(path).exchange().expectBody(String.class).returnResult();
    }

    @Test
    void aDeleteUnblocksTheKeyWhichStartsAfreshAndOtherKeysStayBlocked() {
        String client = newClient();
        String other = newClient();
        block(http, client);
        block(http, other);

        EntityExchangeResult<String> deleted = delete("/actuator/ratelimits/otp-ip/" + client);

        assertThat(deleted.getStatus().value()).isEqualTo(204);
        assertThat(deleted.getResponseBody()).isNull();
        EntityExchangeResult<String> next = sendOtp(http, client);
        assertThat(next.getStatus().value()).isEqualTo(202);
        assertThat(next.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo("2");
        assertThat(sendOtp(http, other).getStatus().value()).as("another address").isEqualTo(429);
    }

    @Test
    void aKeyHoldingSlashesIsTheRestOfThePath() {
        String client = "2001:db8:" + CLIENTS.incrementAndGet() + "::5";
        block(http, client);

        // Clients of one IPv6 /64 share a key: its network address and prefix length.
        EntityExchangeResult<String> deleted = delete("/actuator/ratelimits/otp-ip/2001:db8:" + CLIENTS.get() + "::/64");

        assertThat(deleted.getStatus().value()).isEqualTo(204);
        assertThat(sendOtp(http, client).getStatus().value()).isEqualTo(202);
    }

    @Test
    void oneLimiterIsReadAsTheListShowsIt() {
        EntityExchangeResult<String> one = http.get().uri("/actuator/ratelimits/otp-ip").exchange()
                .expectBody(String.class).returnResult();

        assertThat(one.getStatus().value()).isEqualTo(200);
        assertThat(one.getResponseBody()).startsWith("{\"name\":\"otp-ip\",\"tiers\":[{\"limit\":3,")
                .contains("\"store\":", "\"failurePolicy\":", "\"allowed\":", "\"rejected\":");
        assertThat(http.get().uri("/actuator/ratelimits/no-such-limiter").exchange().expectBody(String.class)
                .returnResult().getStatus().value()).isEqualTo(404);
    }

    @Test
    void anUnknownLimiterIsNotFoundAndTheAnswerNamesNoKey() {
        String client = newClient();
        block(http, client);

        EntityExchangeResult<String> deleted = delete("/actuator/ratelimits/otp-mistyped/" + client);

        assertThat(deleted.getStatus().value()).isEqualTo(404);
        assertThat(deleted.getResponseBody()).isNull();
        assertThat(sendOtp(http, client).getStatus().value()).isEqualTo(429);
    }

    private EntityExchangeResult<String> products(String org) {
        return http.get().uri("/products/" + org + "/items").exchange().expectBody(String.class).returnResult();
    }

    private EntityExchangeResult<String> change(String limiter, String body) {
        return http.post().uri("/actuator/ratelimits/" + limiter).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectBody(String.class).returnResult();
    }

    /** Takes back the live change of a limiter: its configured limits apply again. */
    private int revert(String limiter) {
        return http.delete().uri("/actuator/ratelimits/" + limiter).exchange().expectBody(String.class).returnResult()
                .getStatus().value();
    }

    @Test
    void aLimitChangedLiveTakesEffectOnTheNextCallAndKeepsTheCounts() {
        String org = "org-" + newClient();
        for (int i = 0; i < 3; i++) {
            assertThat(products(org).getStatus().value()).isEqualTo(200);
        }
        assertThat(products(org).getStatus().value()).isEqualTo(429);
        try {
            EntityExchangeResult<String> raised = change("product-api",
                    "{\"limit\":\"5\",\"window\":\"1m\"}");
            assertThat(raised.getStatus().value()).as(raised.getResponseBody()).isEqualTo(200);
            assertThat(raised.getResponseBody()).contains("\"name\":\"product-api\",\"tiers\":[{\"limit\":5,");

            EntityExchangeResult<String> next = products(org);
            assertThat(next.getStatus().value()).as("raised to 5 with 3 used").isEqualTo(200);
            assertThat(next.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"product-api\";q=5;w=60");
            assertThat(products(org).getStatus().value()).isEqualTo(200);
            assertThat(products(org).getStatus().value()).isEqualTo(429);

            assertThat(change("product-api", "{\"limit\":\"1\",\"window\":\"1m\"}").getStatus().value()).isEqualTo(200);
            String fresh = "org-" + newClient();
            assertThat(products(fresh).getStatus().value()).isEqualTo(200);
            assertThat(products(fresh).getStatus().value()).as("lowered to 1").isEqualTo(429);
        } finally {
            revert("product-api");
        }
    }

    @Test
    void aPlanChangedLiveAppliesToTheCallsOfThatPlan() {
        String org = "org-" + newClient();
        try {
            assertThat(change("product-api", "{\"plan\":\"silver\",\"limit\":\"4\",\"window\":\"1m\","
                    + "\"algorithm\":\"sliding-log\"}").getResponseBody()).contains("\"silver\":[{\"limit\":4,");
            for (int i = 0; i < 4; i++) {
                assertThat(http.get().uri("/products/" + org + "/items").header("X-Plan", "silver").exchange()
                        .expectBody(String.class).returnResult().getStatus().value()).isEqualTo(200);
            }
            assertThat(products(org).getStatus().value()).as("back on the default plan, 4 used of 3").isEqualTo(429);
        } finally {
            revert("product-api");
        }
    }

    @Test
    void aChangeShowsWhereTheLimitsComeFromAndTakingItBackRestoresTheConfiguredOnes() {
        try {
            assertThat(change("product-api", "{\"limit\":\"7\",\"window\":\"1m\"}").getResponseBody())
                    .contains("\"tiers\":[{\"limit\":7,").contains("\"change\":{\"version\":")
                    .contains("\"configuredTiers\":[{\"limit\":3,");

            assertThat(revert("product-api")).isEqualTo(204);

            String limits = http.get().uri("/actuator/ratelimits").exchange().expectBody(String.class).returnResult()
                    .getResponseBody();
            assertThat(limits).contains("{\"name\":\"product-api\",\"tiers\":[{\"limit\":3,");
            assertThat(limits.substring(limits.indexOf("\"name\":\"product-api\""))).contains("\"change\":null");
            assertThat(revert("product-api")).as("no change left").isEqualTo(404);
            assertThat(revert("no-such-limiter")).isEqualTo(404);
        } finally {
            revert("product-api");
        }
    }

    @Test
    void aConfigurationRefreshKeepsALiveChangeAndIsWhatTakingItBackRestores(@Autowired ConfigurableApplicationContext app) {
        MutablePropertySources sources = app.getEnvironment().getPropertySources();
        Set<String> keys = Set.of("sluice.limits.product-api.tiers[0].limit", "sluice.limits.product-api.tiers[0].window");
        try {
            change("product-api", "{\"limit\":\"7\",\"window\":\"1m\"}");

            // As Spring Cloud's refresh does it: the environment changes, then an event names the keys.
            sources.addFirst(new MapPropertySource("refreshed", Map.of("sluice.limits.product-api.tiers[0].limit", "4",
                    "sluice.limits.product-api.tiers[0].window", "1m")));
            app.publishEvent(new EnvironmentChangeEvent(app, keys));

            String limiter = http.get().uri("/actuator/ratelimits/product-api").exchange().expectBody(String.class)
                    .returnResult().getResponseBody();
            assertThat(limiter).as("the live change holds").startsWith("{\"name\":\"product-api\",\"tiers\":[{\"limit\":7,")
                    .contains("\"configuredTiers\":[{\"limit\":4,");
            assertThat(revert("product-api")).isEqualTo(204);
            assertThat(http.get().uri("/actuator/ratelimits/product-api").exchange().expectBody(String.class)
                    .returnResult().getResponseBody()).as("the refreshed configuration")
                    .startsWith("{\"name\":\"product-api\",\"tiers\":[{\"limit\":4,");
        } finally {
            revert("product-api");
            sources.remove("refreshed");
            app.publishEvent(new EnvironmentChangeEvent(app, keys));
        }
    }

    @Test
    void aChangeOfAnUnknownLimiterIsNotFoundAndInvalidTiersAreABadRequestThatChangesNothing() {
        assertThat(change("no-such-limiter", "{\"limit\":\"5\",\"window\":\"1m\"}").getStatus().value())
                .isEqualTo(404);
        EntityExchangeResult<String> invalid = change("product-api", "{\"limit\":\"0\",\"window\":\"1m\"}");
        assertThat(invalid.getStatus().value()).isEqualTo(400);
        assertThat(invalid.getResponseBody()).contains("the tier is invalid: limit must be positive, was 0");
        assertThat(change("product-api", "{\"limit\":\"5\",\"window\":\"1 minute\"}").getStatus().value())
                .isEqualTo(400);
        EntityExchangeResult<String> noWindow = change("product-api", "{\"limit\":\"5\"}");
        assertThat(noWindow.getStatus().value()).isEqualTo(400);
        assertThat(noWindow.getResponseBody()).contains("the tier needs both a limit and a window");
        assertThat(http.get().uri("/actuator/ratelimits").exchange().expectBody(String.class).returnResult().getResponseBody())
                .contains("{\"name\":\"product-api\",\"tiers\":[{\"limit\":3,");
    }

    @Test
    void aFloodedKeyComesFirstInTheTopKeysMaskedAsItsHmac() throws Exception {
        String flooder = newClient();
        block(http, flooder);
        for (int i = 0; i < 30; i++) {
            assertThat(sendOtp(http, flooder).getStatus().value()).isEqualTo(429);
        }
        block(http, newClient());

        String top = http.get().uri("/actuator/ratelimits/otp-ip/top?count=1").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();

        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(MASK_SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        String masked = "hmac:" + HexFormat.of().formatHex(mac.doFinal(flooder.getBytes(StandardCharsets.UTF_8)), 0, 8);
        assertThat(top).startsWith("{\"limiter\":\"otp-ip\",\"masked\":true,\"rejected\":[{\"key\":\"" + masked
                + "\",\"count\":31,").doesNotContain(flooder);
        assertThat(http.get().uri("/actuator/ratelimits/no-such-limiter/top").exchange().returnResult(String.class)
                .getStatus().value()).isEqualTo(404);
        assertThat(http.get().uri("/actuator/ratelimits/otp-ip/bottom").exchange().returnResult(String.class)
                .getStatus().value()).isEqualTo(404);
    }
}
