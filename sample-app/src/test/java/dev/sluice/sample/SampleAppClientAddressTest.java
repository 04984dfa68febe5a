package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The sample's code endpoint behind a trusted local proxy: a client cannot escape the limit of 3
 * codes a minute per address by changing how its address looks. Each code goes to another phone
 * number, so that only the address limit applies.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "sluice.web.trusted-proxies=127.0.0.1/32")
class SampleAppClientAddressTest {

    @LocalServerPort
    private int port;

    private WebTestClient client;

    @BeforeEach
    void connect() {
        client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();
    }

    /** Asks for a code as the proxy forwarding {@code forwardedFor}; returns the status. */
    private int sendOtp(String forwardedFor, String phone) {
        return client.post().uri("/api/otp").header("X-Forwarded-For", forwardedFor)
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"phone\":\"" + phone + "\"}")
                .exchange().expectBody(String.class).returnResult().getStatus().value();
    }

    @Test
    void anIpv6ClientRotatingAddressesWithinItsSlash64StaysLimited() {
        List<String> rotating = List.of("2001:db8:5:6::1", "2001:db8:5:6::2", "2001:db8:5:6:1:2:3:4",
                "2001:db8:5:6:ffff:ffff:ffff:ffff");
        for (int i = 0; i < 3; i++) {
            assertThat(sendOtp(rotating.get(i), "+44770090030" + i)).isEqualTo(202);
        }
        assertThat(sendOtp(rotating.get(3), "+447700900303")).isEqualTo(429);
    }

    @Test
    void anIpv4MappedAddressIsTheSameClientAsItsIpv4Address() {
        for (int i = 0; i < 3; i++) {
            assertThat(sendOtp(i % 2 == 0 ? "::ffff:203.0.113.9" : "203.0.113.9", "+44770090040" + i)).isEqualTo(202);
        }
        assertThat(sendOtp("203.0.113.9", "+447700900403")).isEqualTo(429);
    }
}
