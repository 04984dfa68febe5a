package dev.sluice.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.RateLimited;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Live changes made through one instance's actuator, followed by every instance on the same
 * Redis: the running ones within 2 seconds, by the notice or by their reading every second, and
 * those started later as they start; taken back for all by one.
 */
@ExtendWith(RedisExtension.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SharedLimitChangesTest {

    /** What the spec promises: every instance applies a change within this. */
    private static final Duration PROPAGATION = Duration.ofSeconds(2);

    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

    @AfterEach
    void stop() {
        apps.forEach(ConfigurableApplicationContext::close);
    }

    /** An instance on the Redis, each test on a key prefix of its own. */
    private ConfigurableApplicationContext start(RedisServer redis, String prefix, String... more) {
        List<String> properties = new ArrayList<>(List.of("sluice.store=redis",
                "sluice.redis.address=" + redis.address(), "sluice.redis.key-prefix=" + prefix,
                "management.endpoints.web.exposure.include=ratelimits",
                "management.endpoint.ratelimits.access=unrestricted"));
        properties.addAll(List.of(more));
        ConfigurableApplicationContext app = new SpringApplicationBuilder(OrdersApp.class).web(WebApplicationType.NONE)
                .properties(properties.toArray(String[]::new)).run("--spring.config.name=shared-changes");
        apps.add(app);
        return app;
    }

    private static RateLimiter orders(ConfigurableApplicationContext app) {
        return app.getBean(RateLimiterRegistry.class).find("orders").orElseThrow();
    }

    private static long limit(ConfigurableApplicationContext app) {
        return orders(app).tiers().get(0).limit();
    }

    private static RateLimitsEndpoint.LimiterDescriptor change(ConfigurableApplicationContext app, String limit,
                                                               SecurityContext caller) {
        return app.getBean(RateLimitsEndpoint.class).change("orders", null, limit, "1m", null, null, null, caller);
    }

    /** How long it took for the condition to hold, polled for at most 30 s. */
    private static Duration until(String what, BooleanSupplier condition) {
        long started = System.nanoTime();
        RedisCluster.await(what, condition);
        return Duration.ofNanos(System.nanoTime() - started);
    }

    private static SecurityContext operator(String name) {
        Principal principal = () -> name;
        return new SecurityContext() {
            @Override
            public Principal getPrincipal() {
                return principal;
            }

            @Override
            public boolean isUserInRole(String role) {
                return false;
            }
        };
    }

    @Test
    void aChangeReachesEveryInstanceAndThoseStartedLaterAndTakingItBackReachesThemToo(RedisServer redis) {
        ConfigurableApplicationContext a = start(redis, "fleet");
        ConfigurableApplicationContext b = start(redis, "fleet");

        RateLimitsEndpoint.LimiterDescriptor changed = change(a, "10", operator("alice"));

        assertThat(changed.change()).isNotNull();
        assertThat(changed.change().by()).isEqualTo("alice");
        assertThat(changed.change().configuredTiers()).extracting(RateLimitsEndpoint.TierDescriptor::limit)
                .containsExactly(3L);
        assertThat(limit(a)).as("the instance that made it").isEqualTo(10);
        Duration reached = until("the change in the other instance", () -> limit(b) == 10);
        System.out.printf("FLEET change applied by the other instance %d ms after it was made%n", reached.toMillis());
        assertThat(reached).isLessThan(PROPAGATION);

        ConfigurableApplicationContext c = start(redis, "fleet");
        assertThat(limit(c)).as("an instance started afterwards, as it starts").isEqualTo(10);
        RateLimitsEndpoint.LimiterDescriptor described = c.getBean(RateLimitsEndpoint.class).rateLimits().limiters()
                .stream().filter(limiter -> limiter.name().equals("orders")).findFirst().orElseThrow();
        assertThat(described.change().by()).as("where its limits come from").isEqualTo("alice");
        assertThat(described.change().version()).isEqualTo(changed.change().version());

        assertThat(c.getBean(RateLimitsEndpoint.class).revert("orders")).isTrue();

        Duration back = until("the change taken back", () -> limit(a) == 3 && limit(b) == 3);
        System.out.printf("FLEET change taken back by every instance within %d ms%n", back.toMillis());
        assertThat(back).isLessThan(PROPAGATION);
        assertThat(limit(c)).isEqualTo(3);
        assertThat(start(redis, "fleet").getBean(RateLimiterRegistry.class).find("orders").orElseThrow().tiers()
                .get(0).limit()).as("nothing left for the next instance").isEqualTo(3);
    }

    @Test
    void anInstanceThatMissedTheNoticeFollowsWithinTheNextRead(RedisServer redis) {
        ConfigurableApplicationContext a = start(redis, "missed");
        ConfigurableApplicationContext b = start(redis, "missed");
        // Recorded as an instance does, but without the notice: b learns of it only by reading.
        Tier configured = orders(a).tiers().get(0);
        String value = SharedLimitChanges.encode("bob", Instant.parse("2031-03-01T00:00:00Z"), new LimitChanges.Limits(
                List.of(Tier.of(12, configured.window(), configured.algorithm())), orders(a).plans()));
        redis.cli("SET", "missed:{limit-changes}:version", "999");
        redis.cli("HSET", "missed:{limit-changes}", "orders", "999\n" + value);

        Duration reached = until("the change without a notice", () -> limit(a) == 12 && limit(b) == 12);
        System.out.printf("FLEET change without a notice applied within %d ms%n", reached.toMillis());
        assertThat(reached).isLessThan(PROPAGATION);
    }

    @Test
    void aReadTakenBeforeTheInstanceTookItsChangeBackDoesNotBringTheChangeBack(RedisServer redis) {
        ConfigurableApplicationContext a = start(redis, "stale");
        change(a, "10", SecurityContext.NONE);
        SharedLimitChanges changes = a.getBean(SharedLimitChanges.class);
        // The reader's thread read the change just before an operator took it back on a request thread.
        SharedLimitChanges.Snapshot readBefore = changes.snapshot();
        assertThat(a.getBean(RateLimitsEndpoint.class).revert("orders")).isTrue();

        changes.follow(readBefore);

        assertThat(limit(a)).as("its configured limits, not the change taken back").isEqualTo(3);
        changes.read();
        assertThat(limit(a)).isEqualTo(3);
    }

    @Test
    void ofTwoChangesMadeAtOnceTheLaterVersionWinsWholeEverywhere(RedisServer redis) throws Exception {
        ConfigurableApplicationContext a = start(redis, "race");
        ConfigurableApplicationContext b = start(redis, "race");

        for (int round = 0; round < 10; round++) {
            String first = String.valueOf(20 + round);
            String second = String.valueOf(40 + round);
            CompletableFuture.allOf(
                    CompletableFuture.runAsync(() -> change(a, first, SecurityContext.NONE)),
                    CompletableFuture.runAsync(() -> change(b, second, SecurityContext.NONE))).get(10, TimeUnit.SECONDS);

            until("one change everywhere", () -> limit(a) == limit(b) && limit(a) == recordedLimit(redis, "race"));
            assertThat(limit(a)).isIn(Long.parseLong(first), Long.parseLong(second));
        }
    }

    @Test
    void aValueThatCannotBeReadChangesNothing(RedisServer redis) {
        ConfigurableApplicationContext a = start(redis, "unreadable");
        redis.cli("HSET", "unreadable:{limit-changes}", "orders", "7\ntiers=many");
        change(a, "9", SecurityContext.NONE);
        redis.cli("HSET", "unreadable:{limit-changes}", "orders", "not a change");

        ConfigurableApplicationContext b = start(redis, "unreadable");

        assertThat(limit(b)).as("its configured limits").isEqualTo(3);
        assertThat(limit(a)).as("the change it applied").isEqualTo(9);
    }

    /**
     * Redis loses the changes' history (a restart without persistence, a flush) under three
     * instances that made changes: its counter starts again, and every instance follows what it
     * holds from then on, whatever the versions it had, within 2 seconds of the next change.
     */
    @ParameterizedTest
    @ValueSource(strings = {"restart", "FLUSHALL"})
    void afterRedisLostTheChangesEveryInstanceFollowsWhatItHoldsNow(String loss) {
        try (RedisServer own = RedisServer.start()) {
            ConfigurableApplicationContext a = start(own, "lost");
            ConfigurableApplicationContext b = start(own, "lost");
            ConfigurableApplicationContext c = start(own, "lost");
            for (String limit : new String[] {"7", "8", "9"}) {
                change(a, limit, SecurityContext.NONE);
            }
            until("the third change everywhere", () -> limit(b) == 9 && limit(c) == 9);

            if (loss.equals("restart")) {
                own.restart();
            } else {
                own.flushAll();
            }
            // Once the client has reconnected.
            RedisCluster.await("a change made through b", () -> {
                try {
                    change(b, "20", SecurityContext.NONE);
                    return true;
                } catch (StoreUnavailableException e) {
                    return false;
                }
            });

            Duration reached = until("the change everywhere", () -> limit(a) == 20 && limit(c) == 20);
            System.out.printf("FLEET after a %s, a change reached every instance within %d ms%n", loss,
                    reached.toMillis());
            assertThat(reached).isLessThan(PROPAGATION);
            assertThat(c.getBean(RateLimitsEndpoint.class).revert("orders")).isTrue();
            Duration back = until("the change taken back everywhere", () -> limit(a) == 3 && limit(b) == 3);
            assertThat(back).isLessThan(PROPAGATION);
            assertThat(c.getBean(RateLimitsEndpoint.class).revert("orders")).as("nothing left to take back").isFalse();
        }
    }

    /** A counter and a value no instance wrote pin no instance: the next change reaches them all. */
    @Test
    void hostileValuesPinNoInstance(RedisServer redis) {
        ConfigurableApplicationContext a = start(redis, "hostile");
        ConfigurableApplicationContext b = start(redis, "hostile");
        Tier configured = orders(a).tiers().get(0);
        redis.cli("SET", "hostile:{limit-changes}:version", "not a number");
        redis.cli("HSET", "hostile:{limit-changes}", "orders", "999999999999\n" + SharedLimitChanges.encode(null,
                Instant.parse("2031-03-01T00:00:00Z"), new LimitChanges.Limits(
                        List.of(Tier.of(1, configured.window(), configured.algorithm())), orders(a).plans())));
        b.getBean(SharedLimitChanges.class).read();
        assertThat(limit(b)).as("a version ahead of the counter is not taken").isEqualTo(3);

        change(a, "15", SecurityContext.NONE);

        Duration reached = until("the change everywhere", () -> limit(b) == 15);
        assertThat(reached).isLessThan(PROPAGATION);
    }

    @Test
    void withoutSharingAChangeStaysInTheInstanceThatMadeIt(RedisServer redis) {
        ConfigurableApplicationContext a = start(redis, "alone", "sluice.redis.share-changes=false");
        ConfigurableApplicationContext b = start(redis, "alone", "sluice.redis.share-changes=false");

        change(a, "10", SecurityContext.NONE);

        assertThat(limit(a)).isEqualTo(10);
        assertThat(redis.cli("EXISTS", "alone:{limit-changes}")).isEqualTo("0");
        assertThat(limit(b)).isEqualTo(3);
    }

    private static long recordedLimit(RedisServer redis, String prefix) {
        String value = redis.cli("HGET", prefix + ":{limit-changes}", "orders");
        return value.isEmpty() ? -1 : SharedLimitChanges.decode(value).limits().tiers().get(0).limit();
    }

    /** An application with one limiter, {@code orders}: 3 calls a minute per customer. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class OrdersApp {

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    /** A limited service. */
    static class Orders {

        @RateLimited(name = "orders", key = "#customer", limit = 3, window = "1m")
        public void place(String customer) {
        }
    }
}
