package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.app.LimitedApp;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

/**
 * An operator unblocks a caller over HTTP, with the delete operation granted
 * ({@code management.endpoint.ratelimits.access=unrestricted}); every store must give the same
 * answers. The {@code otp-ip} limiter of {@link LimitedApp} blocks an address for 15 minutes
 * after its fourth code within a minute.
 */
@SpringBootTest(classes = LimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"sluice.web.trusted-proxies=127.0.0.1", "management.endpoint.ratelimits.access=unrestricted"})
abstract class HttpResetContract {

    private static final AtomicInteger CLIENTS = new AtomicInteger();

    @LocalServerPort
    private int port;

    private RestTestClient http;

    @BeforeEach
    void connect() {
        http = RestTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
    }

    /** An IPv4 address of this test's own. */
    static String newClient() {
        return "203.0.113." + CLIENTS.incrementAndGet();
    }

    static EntityExchangeResult<String> sendOtp(RestTestClient http, String client) {
        return http.post().uri("/otp").header("X-Forwarded-For", client).contentType(MediaType.APPLICATION_JSON)
                .body("{\"phone\":\"+1555" + client.replaceAll("\\D", "") + "\"}").exchange()
                .returnResult(String.class);
    }

    /** Asks for codes from one address until it is blocked. */
    static void block(RestTestClient http, String client) {
        for (int i = 0; i < 3; i++) {
            assertThat(sendOtp(http, client).getStatus().value()).isEqualTo(202);
        }
        EntityExchangeResult<String> rejected = sendOtp(http, client);
        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isEqualTo("900");
    }

    private EntityExchangeResult<String> delete(String path) {
        return http.delete().uri(path).exchange().returnResult(String.class);
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
    void anUnknownLimiterIsNotFoundAndTheAnswerNamesNoKey() {
        String client = newClient();
        block(http, client);

        EntityExchangeResult<String> deleted = delete("/actuator/ratelimits/otp-mistyped/" + client);

        assertThat(deleted.getStatus().value()).isEqualTo(404);
        assertThat(deleted.getResponseBody()).isNull();
        assertThat(sendOtp(http, client).getStatus().value()).isEqualTo(429);
    }
}
