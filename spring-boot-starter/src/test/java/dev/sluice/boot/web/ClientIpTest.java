package dev.sluice.boot.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.boot.LocalServer;
import dev.sluice.boot.app.LimitedApp;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.reactiveapp.ReactiveLimitedApp;
import dev.sluice.boot.web.reactive.ReactiveClientIp;
import dev.sluice.boot.web.servlet.ServletClientIp;
import dev.sluice.boot.web.servlet.SluiceWebMvcAutoConfiguration;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.MockHttpServletRequest;

/** {@code #ip}: forwarding headers count only from trusted proxies, in Spring MVC and WebFlux alike. */
class ClientIpTest {

    /** Asks for a code through the server on {@code port}, as a proxy forwarding {@code forwardedFor}; returns the status. */
    private static int sendOtp(int port, String forwardedFor, String phone) {
        return LocalServer.client(port)
                .post().uri("/otp").header("X-Forwarded-For", forwardedFor).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"phone\":\"" + phone + "\"}").exchange().expectBody().returnResult().getStatus().value();
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

        @Test
        void anIpv6ClientRotatingAddressesWithinItsSlash64StaysLimited() {
            List<String> rotating = List.of("2001:db8:77:1::1", "2001:db8:77:1::2", "2001:db8:77:1:a:b:c:d",
                    "[2001:DB8:77:1:FFFF:FFFF:FFFF:FFFF]:443");
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp(port, rotating.get(i), "+1555060" + i)).isEqualTo(202);
            }
            assertThat(sendOtp(port, rotating.get(3), "+15550603")).isEqualTo(429);
        }

        @Test
        void anIpv4MappedAddressIsTheSameClientAsItsIpv4Address() {
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp(port, i % 2 == 0 ? "::ffff:203.0.113.9" : "203.0.113.9", "+1555070" + i))
                        .isEqualTo(202);
            }
            assertThat(sendOtp(port, "203.0.113.9", "+15550703")).isEqualTo(429);
        }
    }

    @Nested
    @SpringBootTest(classes = ReactiveLimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = "spring.config.name=reactive")
    class WithoutTrustedProxiesOnWebFlux {

        @LocalServerPort
        int port;

        @Test
        void aSpoofedForwardingHeaderChangesNothing() {
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp(port, "203.0.113." + i, "+1555140" + i)).isEqualTo(202);
            }
            assertThat(sendOtp(port, "203.0.113.99", "+15551499"))
                    .as("a fourth code from the same socket, claiming yet another address").isEqualTo(429);
        }
    }

    @Nested
    @SpringBootTest(classes = ReactiveLimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {"spring.config.name=reactive", "sluice.web.trusted-proxies=127.0.0.1"})
    class BehindATrustedProxyOnWebFlux {

        @LocalServerPort
        int port;

        @Test
        void eachForwardedClientHasItsOwnLimit() {
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp(port, "192.0.2.10", "+1555150" + i)).isEqualTo(202);
            }
            assertThat(sendOtp(port, "192.0.2.10", "+15551599")).isEqualTo(429);
            assertThat(sendOtp(port, "192.0.2.11", "+15551599")).isEqualTo(202);
        }

        @Test
        void anIpv6ClientRotatingAddressesWithinItsSlash64StaysLimited() {
            List<String> rotating = List.of("2001:db8:78:1::1", "2001:db8:78:1::2", "2001:db8:78:1:a:b:c:d",
                    "[2001:DB8:78:1:FFFF:FFFF:FFFF:FFFF]:443");
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp(port, rotating.get(i), "+1555160" + i)).isEqualTo(202);
            }
            assertThat(sendOtp(port, rotating.get(3), "+15551603")).isEqualTo(429);
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

    /**
     * The client address of a request as Spring MVC finds it, which must be the one WebFlux finds
     * for a request with the same peer and headers: both go through one resolver.
     */
    private static String resolve(ClientIpResolver resolver, MockHttpServletRequest request) {
        String servlet = ServletClientIp.of(resolver, request);
        InetAddress peer;
        try {
            peer = InetAddress.getByName(request.getRemoteAddr());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
        MockServerHttpRequest.BaseBuilder<?> reactive = MockServerHttpRequest.get("/")
                .remoteAddress(new InetSocketAddress(peer, 50_000));
        for (String name : Collections.list(request.getHeaderNames())) {
            reactive.header(name, Collections.list(request.getHeaders(name)).toArray(String[]::new));
        }
        assertThat(ReactiveClientIp.of(resolver, reactive.build()))
                .as("the address WebFlux finds for the same request").isEqualTo(servlet);
        return servlet;
    }

    /** One key per address, so that the tests of the walk see which hop was chosen. */
    private final ClientIpResolver behindXForwardedFor = new ClientIpResolver(List.of("10.0.0.0/8", "fd00::/8"),
            ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, 128);

    private static ClientIpResolver untrusting(int ipv6Prefix) {
        return new ClientIpResolver(List.of(), ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, ipv6Prefix);
    }

    private static String fromSocket(ClientIpResolver resolver, String peer) {
        return resolve(resolver, request(peer, null, null));
    }

    @Test
    void walksTheChainFromTheRightPastTrustedProxiesOnly() {
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.1.1.1")))
                .as("the spoofed left end is beyond the first untrusted hop").isEqualTo("198.51.100.7");
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "198.51.100.7")))
                .isEqualTo("198.51.100.7");
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "10.9.9.9, 10.1.1.1")))
                .as("every hop trusted: the leftmost").isEqualTo("10.9.9.9");
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", null, null))).isEqualTo("10.0.0.2");
        assertThat(resolve(behindXForwardedFor, request("203.0.113.5", "X-Forwarded-For", "198.51.100.7")))
                .as("an untrusted peer's header is ignored").isEqualTo("203.0.113.5");
    }

    @Test
    void dropsPortsAndBracketsSoThatEachSourcePortIsNotAClientOfItsOwn() {
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "198.51.100.7:51234")))
                .isEqualTo("198.51.100.7");
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "[2001:db8::1]:443")))
                .isEqualTo("2001:db8::1");
    }

    @Test
    void endsTheWalkAtTheLastTrustedProxyWhenAHopIsNoAddress() {
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "evil-1, 10.1.1.1")))
                .isEqualTo("10.1.1.1");
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "dead.beef.cafe")))
                .as("a name, never looked up").isEqualTo("10.0.0.2");
    }

    @Test
    void readsOnlyTheHeaderTheProxiesSet() {
        MockHttpServletRequest request = request("10.0.0.2", "X-Forwarded-For", "198.51.100.7");
        request.addHeader("Forwarded", "for=203.0.113.66");
        assertThat(resolve(behindXForwardedFor, request)).as("a client's own Forwarded header").isEqualTo("198.51.100.7");

        ClientIpResolver behindForwarded = new ClientIpResolver(List.of("10.0.0.0/8", "fd00::/8"),
                ClientIpResolver.ForwardingHeader.FORWARDED, 128);
        MockHttpServletRequest forwarded = request("fd00::1", "Forwarded",
                "for=\"[2001:db8:cafe::17]:4711\";proto=https, for=10.2.2.2;by=10.0.0.1");
        forwarded.addHeader("X-Forwarded-For", "6.6.6.6");
        assertThat(resolve(behindForwarded, forwarded)).isEqualTo("2001:db8:cafe::17");
        assertThat(resolve(behindForwarded, request("10.0.0.2", "Forwarded", "for=192.0.2.60:8080")))
                .isEqualTo("192.0.2.60");
        assertThat(resolve(behindForwarded, request("10.0.0.2", "Forwarded", "for=unknown"))).isEqualTo("10.0.0.2");
    }

    @Test
    void refusesTrustedProxiesThatAreNotAddresses() {
        assertThatThrownBy(() -> new ClientIpResolver(List.of("proxy.internal"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, 64))
                .hasMessageContaining("'proxy.internal' is not an IP address or CIDR range");
        assertThatThrownBy(() -> new ClientIpResolver(List.of("10.0.0.0/33"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, 64))
                .hasMessageContaining("prefix length outside 0..32");
        assertThatThrownBy(() -> new ClientIpResolver(List.of("::ffff:10.0.0.0/80"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, 64))
                .as("an IPv4-mapped range reaching beyond ::ffff:0:0/96")
                .hasMessageContaining("prefix length outside 96..128");
    }

    @Test
    void anIpv4MappedAddressIsItsIpv4AddressFromTheSocketAndFromEitherHeader() {
        assertThat(fromSocket(untrusting(64), "::ffff:203.0.113.9")).isEqualTo("203.0.113.9");
        assertThat(fromSocket(untrusting(64), "0:0:0:0:0:FFFF:CB00:7109")).as("hexadecimal, upper case")
                .isEqualTo("203.0.113.9");
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "::ffff:198.51.100.7")))
                .isEqualTo("198.51.100.7");
        assertThat(resolve(behindXForwardedFor, request("10.0.0.2", "X-Forwarded-For", "[::FFFF:198.51.100.7]:5000")))
                .isEqualTo("198.51.100.7");
        ClientIpResolver behindForwarded = new ClientIpResolver(List.of("10.0.0.0/8"),
                ClientIpResolver.ForwardingHeader.FORWARDED, 64);
        assertThat(resolve(behindForwarded, request("10.0.0.2", "Forwarded", "for=\"[::ffff:c633:6407]:4711\"")))
                .isEqualTo("198.51.100.7");
    }

    @Test
    void writesIpv6AddressesAsRfc5952Says() {
        ClientIpResolver perAddress = untrusting(128);
        assertThat(fromSocket(perAddress, "2001:0DB8:0:0:1:0:0:1")).as("the first of two equal runs")
                .isEqualTo("2001:db8::1:0:0:1");
        assertThat(fromSocket(perAddress, "2001:db8:0:0:0:0:2:1")).isEqualTo("2001:db8::2:1");
        assertThat(fromSocket(perAddress, "2001:db8:0:1:1:1:1:1")).as("a single zero group stays")
                .isEqualTo("2001:db8:0:1:1:1:1:1");
        assertThat(fromSocket(perAddress, "2001:0:0:1:0:0:0:1")).as("the longest run").isEqualTo("2001:0:0:1::1");
        assertThat(fromSocket(perAddress, "2001:DB8:0000:0000:0000:0000:0000:0000")).isEqualTo("2001:db8::");
        assertThat(fromSocket(perAddress, "0:0:0:0:0:0:0:1")).isEqualTo("::1");
        assertThat(fromSocket(perAddress, "::")).isEqualTo("::");
    }

    @Test
    void groupsIpv6ClientsByPrefix() {
        String client = "2001:db8:1:2ff:aaaa:bbbb:cccc:dddd";
        assertThat(fromSocket(untrusting(64), client)).isEqualTo("2001:db8:1:2ff::/64");
        assertThat(fromSocket(untrusting(64), "2001:db8:1:2ff::1")).isEqualTo("2001:db8:1:2ff::/64");
        assertThat(fromSocket(untrusting(60), client)).isEqualTo("2001:db8:1:2f0::/60");
        assertThat(fromSocket(untrusting(48), client)).isEqualTo("2001:db8:1::/48");
        assertThat(fromSocket(untrusting(128), client)).as("no /128").isEqualTo(client);
        assertThat(fromSocket(untrusting(1), client)).isEqualTo("::/1");
        assertThat(fromSocket(untrusting(1), "fd00::1")).isEqualTo("8000::/1");
        assertThat(fromSocket(untrusting(48), "203.0.113.9")).as("IPv4 is not grouped").isEqualTo("203.0.113.9");
        assertThat(resolve(new ClientIpResolver(List.of("10.0.0.0/8"), ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR,
                64), request("10.0.0.2", "X-Forwarded-For", "2001:db8:9:9:1:2:3:4")))
                .as("a forwarded client").isEqualTo("2001:db8:9:9::/64");
    }

    @Test
    void trustsIpv4MappedRangesAsTheirIpv4Ranges() {
        ClientIpResolver mappedRange = new ClientIpResolver(List.of("::ffff:10.0.0.0/104"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, 64);
        assertThat(resolve(mappedRange, request("10.200.0.2", "X-Forwarded-For", "198.51.100.7"))).isEqualTo("198.51.100.7");
        assertThat(resolve(mappedRange, request("::ffff:10.200.0.2", "X-Forwarded-For", "198.51.100.7")))
                .isEqualTo("198.51.100.7");
        assertThat(resolve(mappedRange, request("11.0.0.2", "X-Forwarded-For", "198.51.100.7")))
                .as("outside 10.0.0.0/8").isEqualTo("11.0.0.2");
        assertThat(resolve(mappedRange, request("10.0.0.2", "X-Forwarded-For", "198.51.100.7, ::ffff:10.1.1.1")))
                .isEqualTo("198.51.100.7");

        ClientIpResolver mappedAddress = new ClientIpResolver(List.of("::ffff:10.0.0.7"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, 64);
        assertThat(resolve(mappedAddress, request("10.0.0.7", "X-Forwarded-For", "198.51.100.7"))).isEqualTo("198.51.100.7");
        assertThat(resolve(mappedAddress, request("10.0.0.8", "X-Forwarded-For", "198.51.100.7"))).isEqualTo("10.0.0.8");

        ClientIpResolver ipv4Range = new ClientIpResolver(List.of("10.0.0.0/8"),
                ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR, 64);
        assertThat(resolve(ipv4Range, request("::ffff:10.0.0.2", "X-Forwarded-For", "198.51.100.7")))
                .isEqualTo("198.51.100.7");
    }

    @Test
    void refusesIpv6PrefixesOutside1To128() {
        for (int prefix : new int[] {0, 129, -64}) {
            assertThatThrownBy(() -> untrusting(prefix))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("sluice.web.ipv6-prefix must be from 1 to 128, not " + prefix);
        }
    }

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceWebMvcAutoConfiguration.class));

    @Test
    void takesThePrefixFromSluiceWebIpv6Prefix() {
        web.withPropertyValues("sluice.web.ipv6-prefix=48").run(context -> assertThat(resolve(context
                .getBean(ClientIpResolver.class), request("2001:db8:1:2::3", null, null)))
                .isEqualTo("2001:db8:1::/48"));
        web.withPropertyValues("sluice.web.ipv6-prefix=0").run(context -> assertThat(context).getFailure()
                .rootCause().hasMessage("sluice.web.ipv6-prefix must be from 1 to 128, not 0"));
    }
}
