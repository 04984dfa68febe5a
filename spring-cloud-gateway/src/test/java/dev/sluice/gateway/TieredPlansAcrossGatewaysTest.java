package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimitStore;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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

/**
 * One route limited three tiers deep (per second, minute and day), with a plan per API key, across
 * two WebFlux gateway instances sharing a real redis-server: the instances count together, each
 * tier refuses in turn with the wait it binds, and a key on the bigger plan is limited by its own
 * tiers. The Redis store decides by a clock the test moves, which both instances share.
 */
class TieredPlansAcrossGatewaysTest {

    /** An hour into a day: fixed windows of a second, a minute and a day all start at their beginning. */
    private static final MutableClock CLOCK = new MutableClock(Instant.parse("2030-01-01T01:00:00Z"));
    private static final RedisServer REDIS = RedisServer.start();
    private static final Backend BACKEND = Backend.start();

    private static ConfigurableApplicationContext first;
    private static ConfigurableApplicationContext second;

    /** A WebFlux gateway whose Redis store reads the test's clock. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
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
        first = start();
        second = start();
    }

    private static ConfigurableApplicationContext start() {
        String route = "spring.cloud.gateway.server.webflux.routes[0].";
        String args = route + "filters[0].args.";
        return new SpringApplicationBuilder(Gateway.class).web(WebApplicationType.REACTIVE).properties(
                "server.port=0",
                "sluice.limits.api.tiers[0].limit=2", "sluice.limits.api.tiers[0].window=1s",
                "sluice.limits.api.tiers[0].algorithm=fixed-window",
                "sluice.limits.api.tiers[1].limit=4", "sluice.limits.api.tiers[1].window=1m",
                "sluice.limits.api.tiers[1].algorithm=fixed-window",
                "sluice.limits.api.tiers[2].limit=6", "sluice.limits.api.tiers[2].window=1d",
                "sluice.limits.api.tiers[2].algorithm=fixed-window",
                "sluice.limits.api.plans.gold.tiers[0].limit=4", "sluice.limits.api.plans.gold.tiers[0].window=1s",
                "sluice.limits.api.plans.gold.tiers[0].algorithm=fixed-window",
                "sluice.limits.api.plans.gold.tiers[1].limit=40", "sluice.limits.api.plans.gold.tiers[1].window=1m",
                "sluice.limits.api.plans.gold.tiers[1].algorithm=fixed-window",
                "sluice.limits.api.plans.gold.tiers[2].limit=400", "sluice.limits.api.plans.gold.tiers[2].window=1d",
                "sluice.limits.api.plans.gold.tiers[2].algorithm=fixed-window",
                route + "id=api",
                route + "uri=" + BACKEND.uri(),
                route + "predicates[0]=Path=/api/**",
                route + "filters[0].name=RequestRateLimiter",
                args + "rate-limiter=#{@sluiceRateLimiter}",
                args + "key-resolver=#{@sluiceKeyResolver}",
                args + "sluice-rate-limiter.limiter=api",
                args + "sluice-rate-limiter.key=#request.headers.getFirst('X-Api-Key')",
                args + "sluice-rate-limiter.plan=#request.headers.getFirst('X-Api-Key').startsWith('gold-') ? 'gold' : null")
                .run();
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

    @Test
    void eachTierRefusesInTurnAcrossBothInstancesAndTheGoldPlanHasItsOwn() {
        GatewayClient a = client(first);
        GatewayClient b = client(second);

        // The second's limit: two requests, one to each instance, and a third is refused.
        assertThat(List.of(a.get("/api/x", "free-1"), b.get("/api/x", "free-1")))
                .allSatisfy(response -> assertThat(response.statusCode()).isEqualTo(200));
        HttpResponse<String> perSecond = a.get("/api/x", "free-1");
        assertThat(perSecond.statusCode()).isEqualTo(429);
        assertThat(perSecond.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(perSecond.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=2;w=1");

        // The minute's limit: two more in the next second, then the minute's four are used.
        CLOCK.advance(Duration.ofSeconds(1));
        assertThat(b.get("/api/x", "free-1").statusCode()).isEqualTo(200);
        assertThat(a.get("/api/x", "free-1").statusCode()).isEqualTo(200);
        CLOCK.advance(Duration.ofSeconds(1));
        HttpResponse<String> perMinute = b.get("/api/x", "free-1");
        assertThat(perMinute.statusCode()).isEqualTo(429);
        assertThat(perMinute.headers().firstValue("Retry-After")).hasValue("58");
        assertThat(perMinute.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=4;w=60");

        // The day's limit: two more in the next minute, then the day's six are used until midnight.
        CLOCK.advance(Duration.ofMinutes(1));
        assertThat(a.get("/api/x", "free-1").statusCode()).isEqualTo(200);
        assertThat(b.get("/api/x", "free-1").statusCode()).isEqualTo(200);
        CLOCK.advance(Duration.ofSeconds(1));
        HttpResponse<String> perDay = a.get("/api/x", "free-1");
        assertThat(perDay.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(perDay.headers().firstValue("Retry-After").orElseThrow()))
                .isBetween(Duration.ofHours(22).toSeconds(), Duration.ofHours(23).toSeconds());
        assertThat(perDay.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=6;w=86400");

        // A key on the gold plan: four a second, whatever the free key used.
        List<Integer> gold = List.of(a.get("/api/x", "gold-1"), b.get("/api/x", "gold-1"), a.get("/api/x", "gold-1"),
                b.get("/api/x", "gold-1"), a.get("/api/x", "gold-1")).stream().map(HttpResponse::statusCode).toList();
        assertThat(gold).containsExactly(200, 200, 200, 200, 429);
    }
}
