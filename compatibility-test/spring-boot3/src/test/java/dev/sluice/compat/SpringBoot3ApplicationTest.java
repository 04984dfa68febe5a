package dev.sluice.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.annotation.RateLimited;
import dev.sluice.redisson.testing.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.SpringVersion;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot 3.5 web application with {@code sluice-spring-boot3-starter}, as a user of that
 * line writes it: an annotated endpoint, an HTTP rule from its YAML, the actuator, and the Redis
 * store from Spring Boot's own {@code spring.data.redis.*} settings.
 */
class SpringBoot3ApplicationTest {

    private final HttpClient http = HttpClient.newHttpClient();
    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

    @AfterEach
    void stop() {
        apps.forEach(ConfigurableApplicationContext::close);
    }

    private String start(String... arguments) {
        List<String> all = new ArrayList<>(List.of("--server.port=0", "--spring.config.name=compat"));
        all.addAll(List.of(arguments));
        ConfigurableApplicationContext app = SpringApplication.run(OtpApplication.class, all.toArray(String[]::new));
        apps.add(app);
        return "http://127.0.0.1:" + app.getEnvironment().getRequiredProperty("local.server.port");
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theFourthRequestFromOneAddressIsA429WithTheProblemAndEveryHeader() throws Exception {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
        assertThat(SpringVersion.getVersion()).startsWith("6.2.");
        String base = start();
        for (int i = 0; i < 3; i++) {
            assertThat(get(base + "/otp").statusCode()).isEqualTo(200);
        }

        HttpResponse<String> rejected = get(base + "/otp");

        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(rejected.headers().firstValue("Retry-After")).hasValueSatisfying(value ->
                assertThat(Integer.parseInt(value)).isPositive());
        assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(value ->
                assertThat(value).endsWith(";q=3;w=60"));
        assertThat(rejected.headers().firstValue("RateLimit")).hasValueSatisfying(value ->
                assertThat(value).contains(";r=0;t="));
        assertThat(rejected.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
        assertThat(rejected.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(rejected.headers().firstValue("X-RateLimit-Reset")).isPresent();
        assertThat(rejected.body()).contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"",
                "\"status\":429", "\"violated-policies\":[");

        assertThat(get(base + "/actuator/ratelimits").body()).contains("\"name\":\"catalog\"", "\"limit\":3");
    }

    @Test
    void anHttpRuleFromTheApplicationsYamlLimitsBeforeTheHandlerRuns() throws Exception {
        String base = start();
        assertThat(get(base + "/catalog/items").statusCode()).isEqualTo(200);
        assertThat(get(base + "/catalog/items").statusCode()).isEqualTo(200);

        HttpResponse<String> rejected = get(base + "/catalog/items");

        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"catalog\";q=2;w=60");
        assertThat(OtpApplication.CATALOG_CALLS).hasValue(2);
    }

    @Test
    void theRedisStoreTakesItsServerFromSpringDataRedisSettings() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            String base = start("--sluice.store=redis", "--spring.data.redis.host=127.0.0.1",
                    "--spring.data.redis.port=" + redis.port());
            for (int i = 0; i < 3; i++) {
                assertThat(get(base + "/otp").statusCode()).isEqualTo(200);
            }

            assertThat(get(base + "/otp").statusCode()).isEqualTo(429);
            assertThat(redis.cli("DBSIZE")).isNotEqualTo("0");
            assertThat(get(base + "/actuator/health").body()).contains("\"store\":\"RedissonRateLimitStore\"");
        }
    }

    /** One limited endpoint and one an HTTP rule limits. */
    @SpringBootApplication
    @RestController
    static class OtpApplication {

        static final AtomicInteger CATALOG_CALLS = new AtomicInteger();

        @GetMapping("/otp")
        @RateLimited(key = "#ip", limit = 3, window = "1m")
        String otp() {
            return "sent";
        }

        @GetMapping("/catalog/items")
        String catalog() {
            CATALOG_CALLS.incrementAndGet();
            return "[]";
        }
    }
}
