package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.gateway.docs.ApiKeys;
import dev.sluice.gateway.docs.Plans;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * The set-up of docs/spring-cloud-gateway.md: one route limited three tiers deep (per second,
 * minute and day), with a plan per API key, across two WebFlux gateway instances sharing a real
 * redis-server. The instances run the YAML of the page as it is there, with its two beans, the
 * backend's and Redis's addresses replaced by the test's. They count together, each tier refuses in
 * turn with the wait it binds, a key on the gold plan is limited by its own tiers, and a request
 * without a key gets the 400 problem. The Redis store decides by a clock the test moves, which both
 * instances share, in place of the store {@code sluice.store: redis} would make, which takes Redis's.
 */
class TieredPlansAcrossGatewaysTest {

    /** The page's YAML blocks that this test runs follow this line. */
    private static final String MARKER = "<!-- run by TieredPlansAcrossGatewaysTest -->";
    private static final String PAGE_BACKEND = "http://partner.internal";
    private static final String PAGE_REDIS = "redis://redis.internal:6379";
    private static final String PATH = "/partner/orders";

    /** An hour into a day: fixed windows of a second, a minute and a day all start at their beginning. */
    private static final MutableClock CLOCK = new MutableClock(Instant.parse("2030-01-01T01:00:00Z"));
    private static final RedisServer REDIS = RedisServer.start();
    private static final Backend BACKEND = Backend.start();

    private static ConfigurableApplicationContext first;
    private static ConfigurableApplicationContext second;

    /** A WebFlux gateway with the page's beans, whose Redis store reads the test's clock. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({ApiKeys.class, Plans.class})
    static class Gateway {

        @Bean(destroyMethod = "shutdown")
        RedissonClient gatewayRedisson() {
            return RedisClients.connect(REDIS);
        }

        @Bean
        RateLimitStore gatewayStore(RedissonClient gatewayRedisson) {
            return RedissonRateLimitStore.builder(gatewayRedisson).clock(CLOCK).timeout(Duration.ofSeconds(10)).build();
        }
    }

    @BeforeAll
    static void startGateways() {
        Map<String, Object> page = pageConfiguration();
        first = start(page);
        second = start(page);
    }

    private static ConfigurableApplicationContext start(Map<String, Object> page) {
        return new SpringApplicationBuilder(Gateway.class).web(WebApplicationType.REACTIVE)
                .properties(page)
                .properties("server.port=0")
                .run();
    }

    /** The properties of the page's YAML blocks that this test runs, with the test's addresses. */
    private static Map<String, Object> pageConfiguration() {
        Path page = Path.of("..", "docs", "spring-cloud-gateway.md");
        String[] lines;
        try {
            lines = Files.readString(page, StandardCharsets.UTF_8).split("\n", -1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Object> properties = new LinkedHashMap<>();
        for (int i = 0; i < lines.length; i++) {
            if (!lines[i].equals(MARKER)) {
                continue;
            }
            assertThat(lines[i + 1]).as("the line after the marker at line %d", i + 1).isEqualTo("```yaml");
            StringBuilder yaml = new StringBuilder();
            for (int j = i + 2; !lines[j].startsWith("```"); j++) {
                yaml.append(lines[j]).append('\n');
            }
            properties.putAll(yaml(yaml.toString()));
        }
        assertThat(properties).containsEntry("spring.cloud.gateway.server.webflux.routes[0].uri", PAGE_BACKEND)
                .containsEntry("sluice.store", "redis")
                .containsEntry("sluice.redis.address", PAGE_REDIS);
        properties.put("spring.cloud.gateway.server.webflux.routes[0].uri", BACKEND.uri());
        properties.put("sluice.redis.address", REDIS.address());
        return properties;
    }

    private static Map<String, Object> yaml(String yaml) {
        try {
            Map<String, Object> properties = new LinkedHashMap<>();
            for (PropertySource<?> source : new YamlPropertySourceLoader()
                    .load("docs/spring-cloud-gateway.md", new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)))) {
                EnumerablePropertySource<?> values = (EnumerablePropertySource<?>) source;
                for (String name : values.getPropertyNames()) {
                    properties.put(name, String.valueOf(values.getProperty(name)));
                }
            }
            return properties;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    static void stop() {
        first.close();
        second.close();
        BACKEND.close();
        REDIS.close();
    }

    private static GatewayClient client(ConfigurableApplicationContext gateway) {
        return new GatewayClient(Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port")));
    }

    /** The route's limiter, as the first instance has it: the second counts in the same Redis. */
    private static RateLimiter partner() {
        return first.getBean(RateLimiterRegistry.class).find("partner").orElseThrow();
    }

    /** Takes a free key's 10 permits in each of the next {@code seconds} seconds, then moves to the one after. */
    private static void useSeconds(String apiKey, int seconds) {
        for (int i = 0; i < seconds; i++) {
            partner().acquire(apiKey, 10, null);
            CLOCK.advance(Duration.ofSeconds(1));
        }
    }

    @Test
    void eachTierRefusesInTurnAcrossBothInstancesAndTheGoldPlanHasItsOwn() {
        GatewayClient a = client(first);
        GatewayClient b = client(second);

        // The second's ten, five through each instance; the eleventh is refused, whichever instance takes it.
        for (int i = 0; i < 10; i++) {
            assertThat((i % 2 == 0 ? a : b).get(PATH, "free-1").statusCode()).isEqualTo(200);
        }
        HttpResponse<String> perSecond = a.get(PATH, "free-1");
        assertThat(perSecond.statusCode()).isEqualTo(429);
        assertThat(perSecond.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(perSecond.headers().firstValue("RateLimit-Policy")).hasValue("\"partner\";q=10;w=1");
        assertThat(perSecond.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(perSecond.body()).contains("\"violated-policies\":[\"partner\"]");
        assertThat(b.get(PATH, "free-1").statusCode()).isEqualTo(429);

        // The minute's 200: ten in each of the next 19 seconds, then refused until the minute is over.
        CLOCK.advance(Duration.ofSeconds(1));
        useSeconds("free-1", 19);
        HttpResponse<String> perMinute = b.get(PATH, "free-1");
        assertThat(perMinute.statusCode()).isEqualTo(429);
        assertThat(perMinute.headers().firstValue("Retry-After")).hasValue("40");
        assertThat(perMinute.headers().firstValue("RateLimit-Policy")).hasValue("\"partner\";q=200;w=60");

        // The day's 2,000: 200 in each of the next nine minutes, then refused until midnight.
        for (int minute = 1; minute <= 9; minute++) {
            CLOCK.set(Instant.parse("2030-01-01T01:00:00Z").plus(Duration.ofMinutes(minute)));
            useSeconds("free-1", 20);
        }
        HttpResponse<String> perDay = a.get(PATH, "free-1");
        assertThat(perDay.statusCode()).isEqualTo(429);
        assertThat(perDay.headers().firstValue("Retry-After"))
                .hasValue(String.valueOf(Duration.between(CLOCK.instant(), Instant.parse("2030-01-02T00:00:00Z"))
                        .toSeconds()));
        assertThat(perDay.headers().firstValue("RateLimit-Policy")).hasValue("\"partner\";q=2000;w=86400");

        // A key on the gold plan: 50 a second, whatever the free key used.
        partner().acquire("gold-1", 48, "gold");
        List<Integer> gold = List.of(a.get(PATH, "gold-1"), b.get(PATH, "gold-1"), a.get(PATH, "gold-1"))
                .stream().map(HttpResponse::statusCode).toList();
        assertThat(gold).containsExactly(200, 200, 429);
        assertThat(b.get(PATH, "gold-1").headers().firstValue("RateLimit-Policy")).hasValue("\"partner\";q=50;w=1");
    }

    @Test
    void aRequestWithoutAnApiKeyGetsThe400ProblemFromEitherInstance() {
        for (GatewayClient client : List.of(client(first), client(second))) {
            HttpResponse<String> answer = client.get(PATH, null);

            assertThat(answer.statusCode()).isEqualTo(400);
            assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(answer.body()).doesNotContain("backend");
        }
    }
}
