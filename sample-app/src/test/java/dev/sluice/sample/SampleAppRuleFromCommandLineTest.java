package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * An HTTP rule given on the command line, as an operator would add one to the running sample: it
 * replaces the configured rules and limits its path per organization.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, args = {
    "--sluice.http.rules[0].name=probe", "--sluice.http.rules[0].path=/api/organizations/{org}/products/**",
    "--sluice.http.rules[0].methods=GET", "--sluice.http.rules[0].key=#path['org']",
    "--sluice.http.rules[0].tiers[0].limit=3", "--sluice.http.rules[0].tiers[0].window=1m"})
class SampleAppRuleFromCommandLineTest {

    @LocalServerPort
    private int port;

    private EntityExchangeResult<String> read(String org) {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build()
                .get().uri("/api/organizations/" + org + "/products/p1").exchange().expectBody(String.class).returnResult();
    }

    @Test
    void theFourthReadOfOneOrganizationIsA429NamingTheRule() {
        for (int i = 0; i < 3; i++) {
            assertThat(read("acme").getStatus().value()).as("read %d", i + 1).isEqualTo(404);
        }
        EntityExchangeResult<String> rejected = read("acme");

        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"probe\";q=3;w=60");
        assertThat(rejected.getResponseBody()).contains("\"violated-policies\":[\"probe\"]");
        assertThat(read("globex").getStatus().value()).as("another organization").isEqualTo(404);
    }
}
