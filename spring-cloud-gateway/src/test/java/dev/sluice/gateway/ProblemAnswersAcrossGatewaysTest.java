package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimitStore;
import dev.sluice.gateway.docs.ApiKeys;
import dev.sluice.gateway.docs.Plans;
import dev.sluice.gateway.docs.ServerMvcGatewayRoutes;
import dev.sluice.gateway.docs.WebFluxGatewayRoutes;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Both gateways answer a refused request alike, with Sluice's RFC 9457 problem: the WebFlux gateway
 * with the Java DSL routes of the documentation ({@link WebFluxGatewayRoutes}), the Server MVC
 * gateway with its equivalent ({@link ServerMvcGatewayRoutes}), under fail-closed, on one real
 * redis-server, which the test pauses for the 503. The same body, content type and
 * {@code Retry-After} come back for a request over its limit (429), one without its API key
 * (400) and one that cannot be checked (503).
 */
class ProblemAnswersAcrossGatewaysTest {

    private static final RedisServer REDIS = RedisServer.start();
    private static final Backend BACKEND = Backend.start();

    private static ConfigurableApplicationContext webFlux;
    private static ConfigurableApplicationContext serverMvc;

    /** The store of both gateways: one decision may take 300 ms before the failure policy answers. */
    static class Store {

        @Bean(destroyMethod = "shutdown")
        RedissonClient problemsRedisson() {
            return RedisClients.connect(REDIS);
        }

        @Bean
        RateLimitStore problemsStore(RedissonClient problemsRedisson) {
            return RedissonRateLimitStore.builder(problemsRedisson).timeout(Duration.ofMillis(300)).build();
        }
    }

    /** A WebFlux gateway with the documentation's Java DSL routes. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Store.class, ApiKeys.class, Plans.class, WebFluxGatewayRoutes.class})
    static class WebFluxGateway {
    }

    /** A Server MVC gateway with the documentation's Java DSL routes. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Store.class, Plans.class, ServerMvcGatewayRoutes.class})
    static class ServerMvcGateway {
    }

    @BeforeAll
    static void startGateways() {
        webFlux = start(WebFluxGateway.class, WebApplicationType.REACTIVE);
        serverMvc = start(ServerMvcGateway.class, WebApplicationType.SERVLET);
    }

    private static ConfigurableApplicationContext start(Class<?> gateway, WebApplicationType type) {
        return new SpringApplicationBuilder(gateway).web(type).properties(
                "server.port=0",
                // The WebFlux gateway, on the class path for the other, refuses to start beside Spring MVC.
                "spring.cloud.gateway.server.webflux.enabled=" + (type == WebApplicationType.REACTIVE),
                "orders.uri=" + BACKEND.uri(),
                "partner.uri=" + BACKEND.uri(),
                "sluice.failure-policy=fail-closed",
                "sluice.limits.partner.tiers[0].limit=1",
                "sluice.limits.partner.tiers[0].window=1h")
                .run();
    }

    @AfterAll
    static void stop() {
        serverMvc.close();
        webFlux.close();
        BACKEND.close();
        REDIS.close();
    }

    private static GatewayClient client(ConfigurableApplicationContext gateway) {
        return new GatewayClient(Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port")));
    }

    @Test
    void aRequestOverItsLimitGetsTheSame429Problem() {
        assertThat(client(webFlux).get("/partner/x", "flux-1").statusCode()).isEqualTo(200);
        assertThat(client(serverMvc).get("/partner/x", "mvc-1").statusCode()).isEqualTo(200);

        HttpResponse<String> fromWebFlux = client(webFlux).get("/partner/x", "flux-1");
        HttpResponse<String> fromServerMvc = client(serverMvc).get("/partner/x", "mvc-1");

        assertThat(fromWebFlux.statusCode()).isEqualTo(429);
        assertThat(fromWebFlux.body()).contains("\"violated-policies\":[\"partner\"]", "\"status\":429");
        assertSameAnswer(fromWebFlux, fromServerMvc);
        assertThat(fromWebFlux.headers().firstValue("RateLimit-Policy"))
                .isEqualTo(fromServerMvc.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"partner\";q=1;w=3600");
    }

    @Test
    void aRequestWithoutItsApiKeyGetsTheSame400Problem() {
        HttpResponse<String> fromWebFlux = client(webFlux).get("/partner/x", null);
        HttpResponse<String> fromServerMvc = client(serverMvc).get("/partner/x", null);

        assertThat(fromWebFlux.statusCode()).as(fromWebFlux.body()).isEqualTo(400);
        assertThat(fromWebFlux.body()).contains("\"status\":400");
        assertSameAnswer(fromWebFlux, fromServerMvc);
    }

    @Test
    void aRequestThatCannotBeCheckedGetsTheSame503Problem() {
        HttpResponse<String> fromWebFlux;
        HttpResponse<String> fromServerMvc;
        REDIS.suspend();
        try {
            fromWebFlux = client(webFlux).get("/partner/x", "flux-2");
            fromServerMvc = client(serverMvc).get("/partner/x", "mvc-2");
        } finally {
            REDIS.resume();
        }

        assertThat(fromWebFlux.statusCode()).isEqualTo(503);
        assertThat(fromWebFlux.body()).contains("\"status\":503");
        assertSameAnswer(fromWebFlux, fromServerMvc);
        assertThat(fromWebFlux.headers().firstValue("Retry-After"))
                .isEqualTo(fromServerMvc.headers().firstValue("Retry-After")).isPresent();
    }

    private static void assertSameAnswer(HttpResponse<String> fromWebFlux, HttpResponse<String> fromServerMvc) {
        assertThat(fromWebFlux.statusCode()).isEqualTo(fromServerMvc.statusCode());
        assertThat(fromWebFlux.headers().firstValue("Content-Type")).hasValue("application/problem+json")
                .isEqualTo(fromServerMvc.headers().firstValue("Content-Type"));
        assertThat(fromWebFlux.body()).isEqualTo(fromServerMvc.body());
    }
}
