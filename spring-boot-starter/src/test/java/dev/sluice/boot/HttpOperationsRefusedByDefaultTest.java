package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.app.LimitedApp;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Exposing the {@code ratelimits} endpoint shows the limiters but unblocks nobody and changes no
 * limit: the delete and write operations need
 * {@code management.endpoint.ratelimits.access=unrestricted}, which this application (the one
 * {@link HttpLimitsContract} runs) does not set.
 */
@SpringBootTest(classes = LimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "sluice.web.trusted-proxies=127.0.0.1")
class HttpOperationsRefusedByDefaultTest {

    @LocalServerPort
    private int port;

    @Test
    void aDeleteIsRefusedAndTheKeyStaysBlockedWhileTheEndpointStillReads() {
        WebTestClient http = LocalServer.client(port);
        String client = HttpOperationsContract.newClient();
        HttpOperationsContract.block(http, client);

        EntityExchangeResult<String> deleted = http.delete().uri("/actuator/ratelimits/otp-ip/" + client).exchange()
                .expectBody(String.class).returnResult();

        // 405: the path reads as GET /actuator/ratelimits/{limiter}/top does, and has no DELETE.
        assertThat(deleted.getStatus().value()).as("no such operation").isEqualTo(405);
        assertThat(HttpOperationsContract.sendOtp(http, client).getStatus().value()).isEqualTo(429);
        assertThat(http.get().uri("/actuator/ratelimits").exchange().expectBody(String.class).returnResult().getStatus().value())
                .isEqualTo(200);
    }

    @Test
    void aChangeIsRefusedAndTheLimitStaysAsItWas() {
        WebTestClient http = LocalServer.client(port);

        EntityExchangeResult<String> changed = http.post().uri("/actuator/ratelimits/product-api")
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"limit\":\"1000\",\"window\":\"1m\"}").exchange()
                .expectBody(String.class).returnResult();

        assertThat(changed.getStatus().value()).as("no such operation").isIn(404, 405);
        assertThat(http.get().uri("/actuator/ratelimits").exchange().expectBody(String.class).returnResult().getResponseBody())
                .contains("{\"name\":\"product-api\",\"tiers\":[{\"limit\":3,");
    }
}
