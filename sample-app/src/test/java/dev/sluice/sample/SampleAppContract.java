package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.test.AdmissionLog;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The sample application's three jobs, driven over HTTP on a random port as a client would. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(SampleAppContract.Admissions.class)
abstract class SampleAppContract {

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

    @Autowired
    private OneTimeCodes codes;

    private WebTestClient client;

    @BeforeEach
    void connect() {
        // A batch of calls to the partner takes seconds: more than WebTestClient's 5 s by default.
        client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofMinutes(1))
                .build();
    }

    EntityExchangeResult<String> send(String method, String path, String json) {
        var request = client.method(HttpMethod.valueOf(method)).uri(path);
        if (json != null) {
            request.contentType(MediaType.APPLICATION_JSON).bodyValue(json);
        }
        return request.exchange().expectBody(String.class).returnResult();
    }

    @Test
    void threeCodesPerMinuteFromOneAddressThenA429WithHeadersAndAProblem() {
        for (int i = 0; i < 3; i++) {
            EntityExchangeResult<String> accepted = send("POST", "/api/otp", "{\"phone\":\"+44770090012" + i + "\"}");
            assertThat(accepted.getStatus().value()).isEqualTo(202);
            assertThat(accepted.getResponseBody()).isEqualTo("{\"status\":\"sent\",\"phone\":\"***********2" + i + "\"}");
            assertThat(accepted.getResponseHeaders().getFirst("X-RateLimit-Remaining")).isEqualTo(String.valueOf(2 - i));
        }
        EntityExchangeResult<String> rejected = send("POST", "/api/otp", "{\"phone\":\"+447700900129\"}");

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

    EntityExchangeResult<String> verify(String phone, String code) {
        return send("POST", "/api/otp/verify", "{\"phone\":\"" + phone + "\",\"code\":\"" + code + "\"}");
    }

    @Test
    void rightCodesAreNeverCountedButFiveWrongOnesBlockTheNumber() {
        String phone = "+447700900555";
        String code = codes.issue(phone);
        for (int i = 0; i < 10; i++) {
            EntityExchangeResult<String> right = verify(phone, code);
            assertThat(right.getResponseBody()).as("right code %d", i + 1).isEqualTo("{\"status\":\"verified\"}");
            assertThat(right.getStatus().value()).isEqualTo(200);
        }
        for (int i = 0; i < 4; i++) {
            assertThat(verify(phone, "000000").getStatus().value()).isEqualTo(401);
            assertThat(verify(phone, code).getResponseBody()).as("a right code after %d wrong", i + 1)
                    .isEqualTo("{\"status\":\"verified\"}");
        }
        assertThat(verify(phone, "000000").getStatus().value()).isEqualTo(401);
        // Five wrong codes: the next check is rejected, right or not, and blocks the number.
        EntityExchangeResult<String> blocked = verify(phone, code);
        assertThat(blocked.getStatus().value()).isEqualTo(429);
        assertThat(blocked.getResponseHeaders().getFirst("Retry-After")).isEqualTo("900");
        assertThat(blocked.getResponseBody()).contains("\"detail\":\"Too many wrong codes for this number; try again later\"");
        assertThat(verify("+44 7700-900555", code).getStatus().value()).as("the same number written otherwise")
                .isEqualTo(429);
        String other = "+447700900556";
        assertThat(verify(other, codes.issue(other)).getStatus().value()).isEqualTo(200);
    }

    /**
     * Sixteen wrong codes for one number at once: each check holds its permit while it runs, so
     * the limit bounds the wrong codes checked whatever the timing.
     */
    @Test
    void sixteenWrongCodesAtOnceGetNoMoreThanFiveChecks() throws Exception {
        String phone = "+447700900666";
        codes.issue(phone);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> checks = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                checks.add(pool.submit(() -> {
                    start.await();
                    return verify(phone, "000000").getStatus().value();
                }));
            }
            start.countDown();
            Map<Integer, Integer> statuses = new TreeMap<>();
            for (Future<Integer> check : checks) {
                statuses.merge(check.get(30, TimeUnit.SECONDS), 1, Integer::sum);
            }
            assertThat(statuses).isEqualTo(Map.of(401, 5, 429, 11));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aClientAskingForQuotesTooOftenGetsTheLastOneFetchedNotA429() {
        EntityExchangeResult<String> fresh = send("GET", "/api/quotes/ACME", null);
        assertThat(fresh.getStatus().value()).isEqualTo(200);
        assertThat(fresh.getResponseBody()).matches("\\{\"symbol\":\"ACME\",\"price\":\\d+,\"cached\":false}");
        assertThat(send("GET", "/api/quotes/ACME", null).getResponseBody()).contains("\"cached\":false");

        EntityExchangeResult<String> cached = send("GET", "/api/quotes/ACME", null);
        assertThat(cached.getStatus().value()).isEqualTo(200);
        assertThat(cached.getResponseBody()).isEqualTo(fresh.getResponseBody().replace("false", "true"));
        assertThat(send("GET", "/api/quotes/NEVER", null).getStatus().value()).as("nothing cached yet").isEqualTo(429);
    }

    @Test
    void aCodeNeedsAPhoneNumberAndABatchAReasonableSize() {
        assertThat(send("POST", "/api/otp", "{}").getStatus().value()).isEqualTo(400);
        assertThat(send("POST", "/api/quotes/batch?count=1000", null).getStatus().value()).isEqualTo(400);
        assertThat(send("POST", "/api/quotes/batch?count=10&threads=17", null).getStatus().value()).isEqualTo(400);
    }

    @Test
    void organizationsGetTheLimitsOfTheConfiguration() {
        EntityExchangeResult<String> write = send("PUT", "/api/organizations/acme/products/p1", "{\"name\":\"Anvil\",\"price\":1999}");
        assertThat(write.getStatus().value()).isEqualTo(200);
        assertThat(write.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"org-writes\";q=100;w=10");

        EntityExchangeResult<String> read = send("GET", "/api/organizations/acme/products/p1", null);
        assertThat(read.getStatus().value()).isEqualTo(200);
        assertThat(read.getResponseBody()).isEqualTo("{\"id\":\"p1\",\"name\":\"Anvil\",\"price\":1999}");
        assertThat(read.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"org-reads\";q=1000;w=10");

        for (int i = 1; i < 100; i++) {
            assertThat(send("PUT", "/api/organizations/acme/products/p" + i, "{\"name\":\"x\",\"price\":1}")
                    .getStatus().value()).isEqualTo(200);
        }
        int more = 0;
        while (send("PUT", "/api/organizations/acme/products/p" + (101 + more), "{\"name\":\"x\",\"price\":1}")
                .getStatus().value() == 200) {
            more++;
            assertThat(more).as("writes past the 100th of one organization within 10 s, whatever the clock's position"
                    + " in a window").isLessThanOrEqualTo(writesPastTheLimitNearAWindowsEnd());
        }
        assertThat(send("PUT", "/api/organizations/globex/products/p1", "{\"name\":\"x\",\"price\":1}").getStatus().value())
                .as("another organization").isEqualTo(200);
    }

    @Test
    void anOrganizationOnTheProPlanGetsItsTiers() {
        EntityExchangeResult<String> pro = send("PUT", "/api/organizations/initech/products/p1",
                "{\"name\":\"Stapler\",\"price\":499}");
        assertThat(pro.getStatus().value()).isEqualTo(200);
        assertThat(pro.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"org-writes\";q=500;w=10");
        assertThat(send("GET", "/api/organizations/initech/products/p1", null).getResponseHeaders()
                .getFirst("RateLimit-Policy")).isEqualTo("\"org-reads\";q=5000;w=10");
        assertThat(send("GET", "/api/organizations/umbrella/products/p1", null).getResponseHeaders()
                .getFirst("RateLimit-Policy")).as("the free plan").isEqualTo("\"org-reads\";q=1000;w=10");
    }

    @Test
    void theCatalogIsLimitedByARuleWithThreeTiers() {
        EntityExchangeResult<String> catalog = send("GET", "/v1/product", null);

        assertThat(catalog.getStatus().value()).isEqualTo(200);
        assertThat(catalog.getResponseHeaders().getFirst("RateLimit-Policy")).startsWith("\"product-api\";q=");
        assertThat(send("GET", "/actuator/ratelimits", null).getResponseBody()).contains("{\"name\":\"product-api\","
                + "\"tiers\":[{\"limit\":500,\"window\":\"PT2S\",\"algorithm\":\"FIXED_WINDOW\",\"countRejected\":false,"
                + "\"blockFor\":\"PT0S\"},{\"limit\":2000,\"window\":\"PT10S\"");
    }

    @Test
    void theCatalogRuleCountsEveryRequestTheCatalogAnswers() {
        for (String[] request : CATALOG_REQUESTS) {
            EntityExchangeResult<String> answer = client.method(HttpMethod.valueOf(request[0]))
                    .uri(URI.create("http://127.0.0.1:" + port + request[1])).exchange().expectBody(String.class).returnResult();
            String as = request[0] + " " + request[1];
            assertThat(answer.getStatus().value()).as(as).isEqualTo(200);
            assertThat(answer.getResponseHeaders().getFirst("RateLimit-Policy")).as(as + ", counted by the rule")
                    .startsWith("\"product-api\";q=");
        }
    }

    /**
     * Requests Spring MVC routes to the catalog: HEAD, which the GET handler answers, matrix
     * parameters, {@code ;jsessionid} and percent-encoding.
     */
    private static final List<String[]> CATALOG_REQUESTS = List.of(new String[] {"GET", "/v1/product"},
            new String[] {"HEAD", "/v1/product"}, new String[] {"GET", "/v1/product;jsessionid=0123ABCD"},
            new String[] {"GET", "/v1;version=1/product;color=red"}, new String[] {"GET", "/v1/pr%6Fduct"},
            new String[] {"HEAD", "/v%31/product;jsessionid=0123ABCD"});

    @Test
    void anOperatorLowersTheCatalogsLimitLiveAndItsCountsCarryOn() {
        try {
            EntityExchangeResult<String> changed = send("POST", "/actuator/ratelimits/product-api",
                    "{\"window\":\"60s\",\"limit\":\"3\"}");
            assertThat(changed.getStatus().value()).as(changed.getResponseBody()).isEqualTo(200);
            int admitted = 0;
            EntityExchangeResult<String> rejected;
            while ((rejected = send("GET", "/v1/product", null)).getStatus().value() == 200) {
                admitted++;
                assertThat(admitted).isLessThan(10);
            }
            assertThat(admitted).as("at most 3 in the minute, the catalog calls of other tests included")
                    .isLessThanOrEqualTo(3);
            // The call that ended the loop, not another one, which a new minute could admit.
            assertThat(rejected.getStatus().value()).isEqualTo(429);
            assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"product-api\";q=3;w=60");
        } finally {
            send("POST", "/actuator/ratelimits/product-api", "{\"window\":\"60s\",\"limit\":\"10000\"}");
        }
    }

    /**
     * Starts the partner's counts afresh. Calls of an earlier test may still be within the
     * partner's window: the client rule counts them too, so the test's calls wait for them.
     */
    private void partnerAfresh() {
        assertThat(send("DELETE", "/partner/stats", null).getStatus().value()).isEqualTo(200);
    }

    /** Runs a batch of partner calls and checks that it fetched every quote; returns its result. */
    private Matcher batch(int count, int threads) {
        EntityExchangeResult<String> batch = send("POST", "/api/quotes/batch?count=" + count + "&threads=" + threads,
                null);
        assertThat(batch.getStatus().value()).as(batch.getResponseBody()).isEqualTo(200);
        assertThat(batch.getResponseHeaders().getFirst("RateLimit")).as("the partner's quota is ours, not the client's")
                .isNull();
        Matcher result = Pattern.compile("\\{\"calls\":" + count + ",\"violations\":(\\d+),\"elapsedMillis\":(\\d+)}")
                .matcher(batch.getResponseBody());
        assertThat(result.matches()).as(batch.getResponseBody()).isTrue();
        return result;
    }

    @Test
    void aBatchFromFourThreadsKeepsToThePartnersQuotaByThePartnersOwnCount() throws Exception {
        partnerAfresh();
        admissions.clear();
        Matcher result = batch(20, 4);

        PartnerSimulator.Stats heard = partner.stats();
        assertThat(result.group(1)).as("violations during the batch").isEqualTo("0");
        assertThat(heard.violations()).isZero();
        assertThat(heard.calls()).isEqualTo(20);
        assertThat(heard.mostInOneSecond()).as("most calls the partner heard within a second").isLessThanOrEqualTo(5);
        assertThat(admissions.count()).as("permits the rule granted").isEqualTo(20);
        // Twenty calls, five in any second: the last arrives three seconds or more after the first.
        assertThat(Long.parseLong(result.group(2))).as("elapsed ms").isGreaterThanOrEqualTo(3_000L);
        assertThat(send("GET", "/actuator/metrics/sluice.wait", null).getResponseBody()).contains("\"name\":\"sluice.wait\"");
    }

    @Test
    void theClientRuleIsALimiterOfTheRegistryLikeAnyOther() throws Exception {
        partnerAfresh();
        long allowedBefore = partnerCallsAllowed();
        batch(1, 1);

        EntityExchangeResult<String> limits = send("GET", "/actuator/ratelimits", null);
        // The store's queue, if it has one, holds figures that change from call to call.
        assertThat(limits.getResponseBody()).containsPattern(Pattern.quote("{\"name\":\"partner\",\"tiers\":[{\"limit\":5,"
                + "\"window\":\"PT1S\",\"algorithm\":\"SLIDING_LOG\",\"countRejected\":false,\"blockFor\":\"PT0S\"}],"
                + "\"plans\":{},\"store\":\"" + storeName() + "\",\"storeState\":" + storeState() + ",\"storeQueue\":")
                + "(null|\\{[^}]*\\})" + Pattern.quote(",\"failurePolicy\":\"LOCAL_FALLBACK\",\"allowed\":" + (allowedBefore + 1)
                + ",\"rejected\":0,\"change\":null}"))
                .contains("\"name\":\"otp-ip\"").contains("\"failurePolicy\":\"FAIL_CLOSED\"");
    }

    @Test
    void aPartnerAnswering429WithRetryAfterHearsNoCallUntilThen() throws Exception {
        partnerAfresh();
        assertThat(send("POST", "/partner/break?retryAfter=2", null).getResponseBody()).isEqualTo("{\"retryAfter\":2}");
        Matcher result = batch(3, 1);

        PartnerSimulator.Stats heard = partner.stats();
        assertThat(result.group(1)).as("violations during the batch").isEqualTo("0");
        assertThat(heard.forced429s()).isEqualTo(1);
        assertThat(heard.calls()).as("three quotes, one of them asked twice").isEqualTo(4);
        // Retry-After: 2, counted by the limiter's clock to the millisecond and by the partner's own.
        assertThat(heard.longestQuietAfterForced429Millis()).as("longest ms without a call after the 429")
                .isGreaterThanOrEqualTo(1_990L);
    }

    @Test
    void aPartnerLoweringItsQuotaIsFollowed() throws Exception {
        partnerAfresh();
        try {
            assertThat(send("POST", "/partner/quota?calls=3", null).getResponseBody()).isEqualTo("{\"quota\":3}");
            // Three threads: the calls sent before the first answer tells the new quota fit in it.
            Matcher result = batch(9, 3);

            PartnerSimulator.Stats heard = partner.stats();
            assertThat(result.group(1)).as("violations during the batch").isEqualTo("0");
            assertThat(heard.violations()).isZero();
            assertThat(heard.calls()).isEqualTo(9);
            assertThat(heard.mostInOneSecond()).as("most calls the partner heard within a second").isLessThanOrEqualTo(3);
        } finally {
            send("POST", "/partner/quota?calls=" + PartnerSimulator.DEFAULT_QUOTA, null);
        }
    }

    /** The partner calls admitted so far, as the actuator tells them: the quote endpoint makes some too. */
    private long partnerCallsAllowed() {
        Matcher allowed = Pattern.compile("\\{\"name\":\"partner\",[^\\[]*\\[[^\\]]*\\].*?\"allowed\":(\\d+)")
                .matcher(send("GET", "/actuator/ratelimits", null).getResponseBody());
        assertThat(allowed.find()).isTrue();
        return Long.parseLong(allowed.group(1));
    }

    /** The simple name of the store class the application uses. */
    abstract String storeName();

    /**
     * How many writes past the limit of 100 per 10 s the organization limits may admit when the
     * writes fall on both sides of a window's start: none for a sliding log.
     */
    int writesPastTheLimitNearAWindowsEnd() {
        return 0;
    }

    /** The state of the store's circuit breaker as JSON: {@code null} for a store without one. */
    abstract String storeState();
}
