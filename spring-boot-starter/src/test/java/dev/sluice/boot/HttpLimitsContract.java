package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.app.LimitedApp;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * What a client of a limited web application sees, over real HTTP on a random port; every store
 * must give the same answers. Each test poses as another client behind the trusted local proxy.
 * The limits of {@code org-reads} and {@code switched-off} are set in {@code application.properties}.
 * The limits are sliding logs so that the answers do not depend on where a store's clock is in
 * a window: the Redis store reads the server's time.
 */
@SpringBootTest(classes = LimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "sluice.web.trusted-proxies=127.0.0.1")
abstract class HttpLimitsContract {

    private static final AtomicInteger CLIENTS = new AtomicInteger();

    @LocalServerPort
    private int port;

    @Autowired
    private MeterRegistry meters;

    /** A client address of this test's own. */
    private String client;
    private HttpClient http;

    @BeforeEach
    void newClient() {
        client = "198.51.100." + CLIENTS.incrementAndGet();
        http = new HttpClient(port);
    }

    private HttpResponse<String> sendOtp(String phone) {
        return http.postJson("/otp", "{\"phone\":\"" + phone + "\"}", "X-Forwarded-For", client);
    }

    @Test
    void admittedCallsCarryTheRateLimitHeadersOfEveryLimiter() {
        HttpResponse<String> first = sendOtp("+15550100");

        assertThat(first.statusCode()).isEqualTo(202);
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"otp-ip\";q=3;w=60, \"otp-phone\";q=10;w=3600");
        assertThat(first.headers().firstValue("RateLimit")).get().asString()
                .matches("\"otp-ip\";r=2;t=\\d+, \"otp-phone\";r=9;t=\\d+");
        assertThat(first.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
        assertThat(first.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
        assertThat(first.headers().firstValue("X-RateLimit-Reset")).get().asString().matches("\\d+");
    }

    @Test
    void theFourthCodeFromOneAddressIsA429WithEveryHeaderAndAProblemBody() {
        for (int i = 0; i < 3; i++) {
            assertThat(sendOtp("+1555020" + i).statusCode()).isEqualTo(202);
        }
        HttpResponse<String> rejected = sendOtp("+15550299");

        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(rejected.headers().firstValue("Retry-After")).hasValue("900");
        assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"otp-ip\";q=3;w=60");
        assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"otp-ip\";r=0;t=900");
        assertThat(rejected.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
        assertThat(rejected.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(rejected.headers().firstValue("X-RateLimit-Reset")).hasValue("900");
        assertThat(rejected.body())
                .contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
                .contains("\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\"")
                .contains("\"status\":429")
                .contains("\"detail\":\"Too many codes requested\"")
                .contains("\"violated-policies\":[\"otp-ip\"]")
                .doesNotContain(client).doesNotContain("+1555");
    }

    @Test
    void configurationOverridesTheAnnotationAndTurnsLimitersOff() {
        String org = "/orgs/" + client;
        assertThat(http.get(org).statusCode()).isEqualTo(200);
        assertThat(http.get(org).statusCode()).isEqualTo(200);
        HttpResponse<String> third = http.get(org);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("RateLimit-Policy")).hasValue("\"org-reads\";q=2;w=60");

        for (int i = 0; i < 3; i++) {
            assertThat(http.get("/switched-off").statusCode()).isEqualTo(200);
        }
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

        HttpResponse<String> endpoint = http.get("/actuator/ratelimits");
        assertThat(endpoint.statusCode()).isEqualTo(200);
        assertThat(endpoint.body())
                .contains("{\"name\":\"otp-ip\",\"tiers\":[{\"limit\":3,\"window\":\"PT1M\",\"algorithm\":\"SLIDING_LOG\","
                        + "\"countRejected\":false,\"blockFor\":\"PT15M\"}],\"store\":\"" + storeName() + "\",\"allowed\":")
                .contains("\"name\":\"org-reads\",\"tiers\":[{\"limit\":2,\"window\":\"PT1M\"");
    }

    private double count(String limiter, String outcome) {
        var counter = meters.find("sluice.decisions").tag("limiter", limiter).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    /** The simple name of the store class the application uses. */
    abstract String storeName();
}
