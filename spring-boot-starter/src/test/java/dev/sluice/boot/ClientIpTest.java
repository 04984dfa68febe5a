package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.boot.app.LimitedApp;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.test.web.servlet.client.RestTestClient;

/** {@code #ip}: forwarding headers count only from trusted proxies. */
class ClientIpTest {

    /** Asks for a code through the server on {@code port}, as a proxy forwarding {@code forwardedFor}; returns the status. */
    private static int sendOtp(int port, String forwardedFor, String phone) {
        return RestTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build()
                .post().uri("/otp").header("X-Forwarded-For", forwardedFor).contentType(MediaType.APPLICATION_JSON)
                .body("{\"phone\":\"" + phone + "\"}").exchange().returnResult().getStatus().value();
    }

    @Nested
    @SpringBootTest(classes = LimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
    class WithoutTrustedProxies {

        @LocalServerPort
        int port;

        @Test
        void aSpoofedForwardingHeaderChangesNothing() {
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp(port, "203.0.113." + i, "+1555040" + i)).isEqualTo(202);
            }
            assertThat(sendOtp(port, "203.0.113.99", "+15550499"))
                    .as("a fourth code from the same socket, claiming yet another address").isEqualTo(429);
        }
    }

    @Nested
    @SpringBootTest(classes = LimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = "sluice.web.trusted-proxies=127.0.0.1")
    class BehindATrustedProxy {

        @LocalServerPort
        int port;

        @Test
        void eachForwardedClientHasItsOwnLimit() {
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp(port, "192.0.2.10", "+1555050" + i)).isEqualTo(202);
            }
            assertThat(sendOtp(port, "192.0.2.10", "+15550599")).isEqualTo(429);
            assertThat(sendOtp(port, "192.0.2.11", "+15550599")).isEqualTo(202);
        }
    }

    private static MockHttpServletRequest request(String peer, String header, String value) {
        MockHttpServletRequest request = new MockHttpServletRequest();
        request.setRemoteAddr(peer);
        if (header != null) {
            request.addHeader(header, value);
        }
        return request;
    }

    private final ClientIpResolver behindXForwardedFor = new ClientIpResolver(List.of("10.0.0.0/8", "fd00::/8"),
            ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR);

    @Test
    void walksTheChainFromTheRightPastTrustedProxiesOnly() {
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", "X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.1.1.1")))
                .as("the spoofed left end is beyond the first untrusted hop").isEqualTo("198.51.100.7");
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", "X-Forwarded-For", "198.51.100.7")))
                .isEqualTo("198.51.100.7");
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", "X-Forwarded-For", "10.9.9.9, 10.1.1.1")))
                .as("every hop trusted: the leftmost").isEqualTo("10.9.9.9");
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", null, null))).isEqualTo("10.0.0.2");
        assertThat(behindXForwardedFor.resolve(request("203.0.113.5", "X-Forwarded-For", "198.51.100.7")))
                .as("an untrusted peer's header is ignored").isEqualTo("203.0.113.5");
    }

    @Test
    void dropsPortsAndBracketsSoThatEachSourcePortIsNotAClientOfItsOwn() {
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", "X-Forwarded-For", "198.51.100.7:51234")))
                .isEqualTo("198.51.100.7");
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", "X-Forwarded-For", "[2001:db8::1]:443")))
                .isEqualTo("2001:db8::1");
    }

    @Test
    void endsTheWalkAtTheLastTrustedProxyWhenAHopIsNoAddress() {
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", "X-Forwarded-For", "evil-1, 10.1.1.1")))
                .isEqualTo("10.1.1.1");
        assertThat(behindXForwardedFor.resolve(request("10.0.0.2", "X-Forwarded-For", "dead.beef.cafe")))
                .as("a name, never looked up").isEqualTo("10.0.0.2");
    }

    @Test
    void readsOnlyTheHeaderTheProxiesSet() {
        MockHttpServletRequest request = request("10.0.0.2", "X-Forwarded-For", "198.51.100.7");
        request.addHeader("Forwarded", "for=203.0.113.66");
        assertThat(behindXForwardedFor.resolve(request)).as("a client's own Forwarded header").isEqualTo("198.51.100.7");

        ClientIpResolver behindForwarded = new ClientIpResolver(List.of("10.0.0.0/8", "fd00::/8"),
                ClientIpResolver.ForwardingHeader.FORWARDED);
        MockHttpServletRequest forwarded = request("fd00::1", "Forwarded",
                "for=\"[2001:db8:cafe::17]:4711\";proto=https, for=10.2.2.2;by=10.0.0.1");
        forwarded.addHeader("X-Forwarded-For", "6.6.6.6");
        assertThat(behindForwarded.resolve(forwarded)).isEqualTo("2001:db8:cafe::17");
        assertThat(behindForwarded.resolve(request("10.0.0.2", "Forwarded", "for=192.0.2.60:8080")))
                .isEqualTo("192.0.2.60");
        assertThat(behindForwarded.resolve(request("10.0.0.2", "Forwarded", "for=unknown"))).isEqualTo("10.0.0.2");
    }

    @Test
    void refusesTrustedProxiesThatAreNotAddresses() {
        assertThatThrownBy(() -> new ClientIpResolver(List.of("proxy.internal"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR))
                .hasMessageContaining("'proxy.internal' is not an IP address or CIDR range");
        assertThatThrownBy(() -> new ClientIpResolver(List.of("10.0.0.0/33"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR))
                .hasMessageContaining("prefix length outside 0..32");
    }
}
