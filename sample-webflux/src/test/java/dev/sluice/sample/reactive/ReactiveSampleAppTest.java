package dev.sluice.sample.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.test.AdmissionLog;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The reactive sample over HTTP on a random port, as a client would drive it. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ReactiveSampleAppTest {

    /** Records the partner limiter's admissions. */
    @TestConfiguration
    static class Admissions {
        @Bean
        AdmissionLog partnerAdmissions() {
            return new AdmissionLog("partner");
        }
    }

    @LocalServerPort
    private int port;

    @Autowired
    private PartnerSimulator partner;

    @Autowired
    private AdmissionLog admissions;

    private WebTestClient client;

    @BeforeEach
    void connect() {
        client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(30)).build();
    }

    private EntityExchangeResult<String> sendOtp(String phone) {
        return client.post().uri("/api/otp?phone={phone}", phone).exchange().expectBody(String.class).returnResult();
    }

    @Test
    void threeCodesPerMinuteFromOneAddressThenTheSame429AsTheServletSample() {
        for (int i = 0; i < 3; i++) {
            EntityExchangeResult<String> accepted = sendOtp("+44770090012" + i);
            assertThat(accepted.getStatus().value()).isEqualTo(202);
            assertThat(accepted.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"otp-ip\";q=3;w=60");
            assertThat(accepted.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo(String.valueOf(2 - i));
        }
        EntityExchangeResult<String> rejected = sendOtp("+447700900129");

        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isEqualTo("900");
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"otp-ip\";q=3;w=60");
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit")).isEqualTo("\"otp-ip\";r=0;t=900");
        assertThat(rejected.getResponseHeaders().getFirst("Content-Type")).isEqualTo("application/problem+json");
        assertThat(rejected.getResponseBody())
                .contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
                .contains("\"status\":429")
                .contains("\"detail\":\"Too many codes requested from this address; try again later\"")
                .contains("\"violated-policies\":[\"otp-ip\"]");
    }

    @Test
    void theCatalogRuleCountsEveryRequestTheCatalogAnswers() {
        for (String[] request : CATALOG_REQUESTS) {
            EntityExchangeResult<String> answer = client.method(HttpMethod.valueOf(request[0]))
                    .uri(URI.create("http://127.0.0.1:" + port + request[1])).exchange().expectBody(String.class)
                    .returnResult();
            String as = request[0] + " " + request[1];
            assertThat(answer.getStatus().value()).as(as).isEqualTo(200);
            assertThat(answer.getResponseHeaders().getFirst("RateLimit-Policy")).as(as + ", counted by the rule")
                    .startsWith("\"product-api\";q=500;w=2");
        }
    }

    /**
     * Requests WebFlux routes to the catalog, as the servlet sample's test sends them: HEAD, which
     * the GET handler answers, matrix parameters, {@code ;jsessionid} and percent-encoding.
     */
    private static final List<String[]> CATALOG_REQUESTS = List.of(new String[] {"GET", "/v1/product"},
            new String[] {"HEAD", "/v1/product"}, new String[] {"GET", "/v1/product;jsessionid=0123ABCD"},
            new String[] {"GET", "/v1;version=1/product;color=red"}, new String[] {"GET", "/v1/pr%6Fduct"},
            new String[] {"HEAD", "/v%31/product;jsessionid=0123ABCD"});

    /**
     * Starts the partner's counts afresh. Calls of an earlier test may still be within the
     * partner's window: the client rule counts them too, so the test's calls wait for them.
     */
    private void partnerAfresh() {
        client.delete().uri("/partner/stats").exchange().expectStatus().isOk();
    }

    /** Runs a batch of partner calls and checks that it fetched every quote; returns its result. */
    private Matcher batch(int count) {
        EntityExchangeResult<String> batch = client.post().uri("/api/quotes/batch?count=" + count).exchange()
                .expectBody(String.class).returnResult();
        assertThat(batch.getStatus().value()).as(batch.getResponseBody()).isEqualTo(200);
        Matcher result = Pattern.compile("\\{\"calls\":" + count + ",\"violations\":(\\d+),\"elapsedMillis\":(\\d+)}")
                .matcher(batch.getResponseBody());
        assertThat(result.matches()).as(batch.getResponseBody()).isTrue();
        return result;
    }

    @Test
    void aBatchOfPartnerCallsAllAtOnceKeepsToThePartnersQuotaByThePartnersOwnCount() throws Exception {
        partnerAfresh();
        admissions.clear();
        Matcher result = batch(20);

        PartnerSimulator.Stats heard = partner.stats();
        assertThat(result.group(1)).as("violations during the batch").isEqualTo("0");
        assertThat(heard.violations()).isZero();
        assertThat(heard.calls()).isEqualTo(20);
        assertThat(heard.mostInOneSecond()).as("most calls the partner heard within a second").isLessThanOrEqualTo(5);
        assertThat(admissions.count()).as("permits the rule granted").isEqualTo(20);
        // Twenty calls, five in any second: the last arrives three seconds or more after the first.
        assertThat(Long.parseLong(result.group(2))).as("elapsed ms").isGreaterThanOrEqualTo(3_000L);
    }

    @Test
    void aPartnerAnswering429WithRetryAfterHearsNoCallUntilThen() throws Exception {
        partnerAfresh();
        client.post().uri("/partner/break?retryAfter=2").exchange().expectBody(String.class)
                .isEqualTo("{\"retryAfter\":2}");
        Matcher result = batch(1);

        PartnerSimulator.Stats heard = partner.stats();
        assertThat(result.group(1)).as("violations during the batch").isEqualTo("0");
        assertThat(heard.forced429s()).isEqualTo(1);
        assertThat(heard.calls()).as("one quote, asked twice").isEqualTo(2);
        // Retry-After: 2, counted by the limiter's clock to the millisecond and by the partner's own.
        assertThat(heard.longestQuietAfterForced429Millis()).as("longest ms without a call after the 429")
                .isGreaterThanOrEqualTo(1_990L);
    }
}
