package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sluice.redisson.testing.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every query of the Grafana dashboard in {@code monitoring/grafana} returns data from a real
 * Prometheus scraping the sample application, run with Redis and local counting as a fleet would
 * run it. Needs the {@code prometheus} binary (Debian/Ubuntu: {@code apt-get install prometheus});
 * {@code monitoring/check} runs it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles({"redis", "local-sync"})
class DashboardQueriesTest {

    private static final Path DASHBOARD = Path.of("..", "monitoring", "grafana", "sluice-dashboard.json");
    private static final RedisServer REDIS = RedisServer.start();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    private int port;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.redis.address", REDIS::address);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @Test
    void everyPanelsQueryReturnsDataFromTheSampleScrapedByPrometheus(@TempDir Path work) throws Exception {
        makeTraffic();
        int prometheusPort = freePort();
        Files.writeString(work.resolve("prometheus.yml"), """
                global:
                  scrape_interval: 1s
                scrape_configs:
                  - job_name: sample
                    metrics_path: /actuator/prometheus
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(port));
        Process prometheus = startPrometheus(work, prometheusPort);
        try {
            String api = "http://127.0.0.1:" + prometheusPort + "/api/v1/query?query=";
            // rate() needs two samples of a series; three scrapes leave a margin.
            awaitData(api, "count_over_time(sluice_decisions_total[1m]) >= 3", Duration.ofSeconds(60));

            List<String> empty = new ArrayList<>();
            List<String> queries = queries();
            for (String query : queries) {
                JsonNode answer = get(api + URLEncoder.encode(query, StandardCharsets.UTF_8));
                assertThat(answer.path("status").asString()).as("%s: %s", query, answer).isEqualTo("success");
                if (answer.path("data").path("result").isEmpty()) {
                    empty.add(query);
                }
            }
            assertThat(queries).hasSizeGreaterThanOrEqualTo(15);
            assertThat(empty).as("queries that returned no data").isEmpty();
        } finally {
            prometheus.destroy();
            if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly();
            }
        }
    }

    /** Allowed and rejected calls on Redis, and reads counted locally and synced to it. */
    private void makeTraffic() throws Exception {
        for (int i = 0; i < 5; i++) {
            send("POST", "/api/otp", "{\"phone\":\"+44770090030" + i + "\"}");
        }
        for (int i = 0; i < 20; i++) {
            send("GET", "/api/organizations/acme/products/p1", null);
        }
    }

    private int send(String method, String path, String json) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30));
        request = json == null ? request.method(method, HttpRequest.BodyPublishers.noBody())
                : request.header("Content-Type", "application/json")
                        .method(method, HttpRequest.BodyPublishers.ofString(json));
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** The dashboard's queries, with Grafana's variables as a query in Prometheus's own UI would have them. */
    private static List<String> queries() throws IOException {
        List<String> queries = new ArrayList<>();
        JSON.readTree(Files.readString(DASHBOARD)).path("panels").forEach(panel ->
                panel.path("targets").forEach(target -> queries.add(target.path("expr").asString()
                        .replace("$__rate_interval", "1m").replace("$__range", "5m").replace("$instance", ".*"))));
        return queries;
    }

    private static Process startPrometheus(Path work, int port) throws IOException {
        try {
            return new ProcessBuilder("prometheus", "--config.file=" + work.resolve("prometheus.yml"),
                    "--storage.tsdb.path=" + work.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
                    .redirectErrorStream(true).redirectOutput(work.resolve("prometheus.log").toFile()).start();
        } catch (IOException e) {
            throw new IOException("Cannot start prometheus: install it (Debian/Ubuntu: sudo apt-get install"
                    + " prometheus; macOS: brew install prometheus) so that it is on the PATH", e);
        }
    }

    private static void awaitData(String api, String query, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            try {
                JsonNode answer = get(api + URLEncoder.encode(query, StandardCharsets.UTF_8));
                if (!answer.path("data").path("result").isEmpty()) {
                    return;
                }
                last = answer.toString();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(250);
        }
        fail("Prometheus had not scraped the sample three times within %s: %s", within, last);
    }

    private static JsonNode get(String url) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            // Prometheus answers 503 "Service Unavailable" while it starts.
            throw new IOException("HTTP " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
