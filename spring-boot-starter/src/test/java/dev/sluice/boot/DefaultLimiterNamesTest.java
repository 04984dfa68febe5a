package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.annotation.RateLimited;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Limiters named by default, over HTTP: two keys of one method, and an overloaded method taking
 * an array. Their names are published in every {@code RateLimit-Policy} field and address the
 * actuator endpoint, so they carry no key expression and nothing a URL path would escape.
 */
class DefaultLimiterNamesTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static ConfigurableApplicationContext app;
    private static int port;

    @RestController
    static class Codes {

        @GetMapping("/code")
        @RateLimited(key = "#ip", limit = 1, window = "1m")
        @RateLimited(key = "#phone", limit = 10, window = "1h")
        Map<String, String> send(@RequestParam String phone) {
            return Map.of("sent", phone);
        }

        @GetMapping("/codes")
        @RateLimited(limit = 1, window = "1m")
        Map<String, String> send(@RequestParam String[] phone) {
            return Map.of("sent", String.join(",", phone));
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Codes.class)
    static class CodesApp {
    }

    @BeforeAll
    static void start() {
        app = new SpringApplicationBuilder(CodesApp.class)
                .properties("spring.main.web-application-type=servlet",
                        "management.endpoints.web.exposure.include=ratelimits")
                .run("--server.port=0", "--spring.config.name=default-limiter-names");
        port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    }

    @AfterAll
    static void stop() {
        app.close();
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void defaultNamesAreTokensThatHeadersAndPathsCarryAsTheyAre() throws Exception {
        HttpResponse<String> admitted = get("/code?phone=447700900123");
        HttpResponse<String> overloaded = get("/codes?phone=447700900123");

        assertThat(admitted.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"Codes.send(String)-1\";q=1;w=60, \"Codes.send(String)-2\";q=10;w=3600");
        assertThat(overloaded.headers().firstValue("RateLimit-Policy")).hasValue("\"Codes.send(StringArray)\";q=1;w=60");
        for (String name : new String[] {"Codes.send(String)-1", "Codes.send(String)-2", "Codes.send(StringArray)"}) {
            assertThat(get("/actuator/ratelimits/" + name).statusCode()).as(name).isEqualTo(200);
            assertThat(get("/actuator/ratelimits/" + name + "/top").statusCode()).as(name + "/top").isEqualTo(200);
        }
    }
}
