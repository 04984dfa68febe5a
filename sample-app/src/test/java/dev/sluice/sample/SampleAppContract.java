package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** The sample application's three jobs, driven over HTTP on a random port as a client would. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
abstract class SampleAppContract {

    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    private int port;

    @Autowired
    private PartnerSimulator partner;

    private HttpResponse<String> send(String method, String path, String json) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json")
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        try {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void threeCodesPerMinuteFromOneAddressThenA429WithHeadersAndAProblem() {
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> accepted = send("POST", "/api/otp", "{\"phone\":\"+44770090012" + i + "\"}");
            assertThat(accepted.statusCode()).isEqualTo(202);
            assertThat(accepted.body()).isEqualTo("{\"status\":\"sent\",\"phone\":\"***********2" + i + "\"}");
            assertThat(accepted.headers().firstValue("X-RateLimit-Remaining")).hasValue(String.valueOf(2 - i));
        }
        HttpResponse<String> rejected = send("POST", "/api/otp", "{\"phone\":\"+447700900129\"}");

        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("Retry-After")).hasValue("900");
        assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"otp-ip\";q=3;w=60");
        assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"otp-ip\";r=0;t=900");
        assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(rejected.body())
                .contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
                .contains("\"status\":429")
                .contains("\"detail\":\"Too many codes requested from this address; try again later\"")
                .contains("\"violated-policies\":[\"otp-ip\"]");
    }

    @Test
    void aCodeNeedsAPhoneNumberAndABatchAReasonableSize() {
        assertThat(send("POST", "/api/otp", "{}").statusCode()).isEqualTo(400);
        assertThat(send("POST", "/api/quotes/batch?count=1000", null).statusCode()).isEqualTo(400);
    }

    @Test
    void organizationsGetTheLimitsOfTheConfiguration() {
        HttpResponse<String> write = send("PUT", "/api/organizations/acme/products/p1", "{\"name\":\"Anvil\",\"price\":1999}");
        assertThat(write.statusCode()).isEqualTo(200);
        assertThat(write.headers().firstValue("RateLimit-Policy")).hasValue("\"org-writes\";q=100;w=10");

        HttpResponse<String> read = send("GET", "/api/organizations/acme/products/p1", null);
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(read.body()).isEqualTo("{\"id\":\"p1\",\"name\":\"Anvil\",\"price\":1999}");
        assertThat(read.headers().firstValue("RateLimit-Policy")).hasValue("\"org-reads\";q=1000;w=10");

        for (int i = 1; i < 100; i++) {
            assertThat(send("PUT", "/api/organizations/acme/products/p" + i, "{\"name\":\"x\",\"price\":1}")
                    .statusCode()).isEqualTo(200);
        }
        assertThat(send("PUT", "/api/organizations/acme/products/p101", "{\"name\":\"x\",\"price\":1}").statusCode())
                .as("the 101st write of one organization within 10 s, whatever the clock's position in a window")
                .isEqualTo(429);
        assertThat(send("PUT", "/api/organizations/globex/products/p1", "{\"name\":\"x\",\"price\":1}").statusCode())
                .as("another organization").isEqualTo(200);
    }

    @Test
    void theBatchOfPartnerCallsWaitsForPermitsAndBreaksNoCap() {
        HttpResponse<String> batch = send("POST", "/api/quotes/batch?count=20", null);

        assertThat(batch.statusCode()).isEqualTo(200);
        assertThat(batch.headers().firstValue("RateLimit")).as("the partner's quota is ours, not the client's").isEmpty();
        Matcher result = Pattern.compile("\\{\"calls\":20,\"violations\":(\\d+),\"elapsedMillis\":(\\d+)}")
                .matcher(batch.body());
        assertThat(result.matches()).as(batch.body()).isTrue();
        assertThat(Long.parseLong(result.group(1))).as("violations").isZero();
        assertThat(partner.calls()).as("calls the partner counted, connecting at start-up not among them").isEqualTo(20);
        // Twenty calls at five a second: at least three waits for the partner's window to pass.
        assertThat(Long.parseLong(result.group(2))).as("elapsed ms").isBetween(3_000L, 10_000L);

        HttpResponse<String> limits = send("GET", "/actuator/ratelimits", null);
        assertThat(limits.body()).contains("{\"name\":\"partner\",\"tiers\":[{\"limit\":5,\"window\":\"PT1.1S\","
                + "\"algorithm\":\"SLIDING_LOG\",\"countRejected\":false,\"blockFor\":\"PT0S\"}],\"store\":\""
                + storeName() + "\",\"allowed\":20,\"rejected\":0}");
        assertThat(send("GET", "/actuator/metrics/sluice.wait", null).body()).contains("\"name\":\"sluice.wait\"");
    }

    /** The simple name of the store class the application uses. */
    abstract String storeName();
}
