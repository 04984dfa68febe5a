package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redisson.testing.RedisServer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The sample application with its redis profile while Redis is down: it starts, codes are
 * refused with 503 (their limits fail closed), and everything else is still limited, in this JVM.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class SampleAppRedisOutageTest {

    @Test
    void refusesCodesButServesTheRestWhileRedisIsDown() {
        try (RedisServer redis = RedisServer.start()) {
            redis.kill();
            try (ConfigurableApplicationContext app = new SpringApplicationBuilder(SampleApplication.class)
                    .profiles("redis").run("--server.port=0", "--sluice.redis.address=" + redis.address())) {
                int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
                WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();

                assertThat(client.post().uri("/api/otp").contentType(MediaType.APPLICATION_JSON)
                        .bodyValue("{\"phone\":\"+447700900123\"}").exchange().expectBody(String.class).returnResult()
                        .getStatus().value())
                        .isEqualTo(503);
                for (int i = 0; i < 100; i++) {
                    assertThat(client.put().uri("/api/organizations/acme/products/p" + i)
                            .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"x\",\"price\":1}").exchange()
                            .expectBody(String.class).returnResult().getStatus().value()).isEqualTo(200);
                }
                assertThat(client.put().uri("/api/organizations/acme/products/p101")
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"x\",\"price\":1}").exchange()
                        .expectBody(String.class).returnResult().getStatus().value())
                        .as("the 101st write, limited in this JVM").isEqualTo(429);
            }
        }
    }
}
