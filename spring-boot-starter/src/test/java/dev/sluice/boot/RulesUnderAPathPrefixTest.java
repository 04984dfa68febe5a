package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A rule's path is the path handlers are mapped to, as Spring matches it: within the
 * {@code DispatcherServlet}'s path ({@code spring.mvc.servlet.path}) and within WebFlux's base
 * path ({@code spring.webflux.base-path}). A rule on {@code /control/stats} limits
 * {@code /api/control/stats}, which reaches the handler mapped to {@code /control/stats}.
 */
class RulesUnderAPathPrefixTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @RestController
    static class Stats {

        @GetMapping("/control/stats")
        Map<String, String> stats() {
            return Map.of("stats", "fine");
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Stats.class)
    static class StatsApp {
    }

    @ParameterizedTest
    @CsvSource({"servlet, spring.mvc.servlet.path=/api", "reactive, spring.webflux.base-path=/api"})
    void aRuleLimitsTheRequestsOfTheHandlerItsPathNames(String stack, String prefix) throws Exception {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(StatsApp.class)
                .properties("spring.main.web-application-type=" + stack, prefix,
                        "sluice.http.rules[0].name=stats",
                        "sluice.http.rules[0].path=/control/stats",
                        "sluice.http.rules[0].tiers[0].limit=2",
                        "sluice.http.rules[0].tiers[0].window=1m")
                .run("--server.port=0", "--spring.config.name=rules-under-a-path-prefix")) {
            int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
            List<Integer> statuses = new ArrayList<>();
            String policy = null;
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://localhost:" + port + "/api/control/stats")).build(),
                        HttpResponse.BodyHandlers.ofString());
                statuses.add(response.statusCode());
                policy = response.headers().firstValue("RateLimit-Policy").orElse(policy);
            }

            assertThat(statuses).containsExactly(200, 200, 429);
            assertThat(policy).isEqualTo("\"stats\";q=2;w=60");
        }
    }
}
