package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.config.RateLimitingAdvisor;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.RateLimited;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Which beans the starter contributes, and when. */
@ExtendWith(RedisExtension.class)
class SluiceAutoConfigurationTest {

    /**
     * For tests of where the store connects: a new client's first decision also connects and loads
     * the script, which on a loaded machine can take longer than the default deadline.
     */
    private static final String FIRST_CALL_TIMEOUT = "sluice.redis.timeout=10s";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

    @Test
    void limitsWithAnInMemoryStoreByDefault() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(MethodRateLimiter.class).hasSingleBean(RateLimitingAdvisor.class);
            assertThat(context).getBean(RateLimitStore.class).isInstanceOf(InMemoryRateLimitStore.class);
        });
    }

    @Test
    void startsWithoutSpringWeb() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.http", "org.springframework.web"))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MethodRateLimiter.class));
    }

    @Test
    void turnsEverythingOffWhenDisabled() {
        runner.withPropertyValues("sluice.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(MethodRateLimiter.class).doesNotHaveBean(RateLimitingAdvisor.class)
                    .doesNotHaveBean(RateLimitStore.class);
        });
    }

    /** A store of the application's own. */
    static class OwnStore implements RateLimitStore {
        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            throw new UnsupportedOperationException();
        }
    }

    /** Keyed by an argument that may be null. */
    public static class Greeter {
        @RateLimited(key = "#name", limit = 1, window = "1m")
        public String greet(String name) {
            return "hello";
        }
    }

    @Test
    void appliesTheKeyErrorPolicyOfTheConfiguration() {
        runner.withBean(Greeter.class).run(context -> assertThatThrownBy(() -> context.getBean(Greeter.class).greet(null))
                .isInstanceOf(RateLimitKeyException.class));
        runner.withBean(Greeter.class).withPropertyValues("sluice.key-error=skip").run(context -> {
            Greeter greeter = context.getBean(Greeter.class);
            assertThat(greeter.greet(null)).isEqualTo("hello");
            assertThat(greeter.greet(null)).as("not limited").isEqualTo("hello");
        });
    }

    @Test
    void usesTheApplicationsStore() {
        runner.withBean(OwnStore.class).run(context ->
                assertThat(context).getBean(RateLimitStore.class).isInstanceOf(OwnStore.class));
    }

    @Test
    void makesARedisStoreOnItsOwnClientWhenAskedTo(RedisServer redis) {
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address()).run(context -> {
            assertThat(context).getBean(RateLimitStore.class).isInstanceOf(RedissonRateLimitStore.class);
            assertThat(context).hasSingleBean(RedissonClient.class);
        });
    }

    @Test
    void connectsWhereSpringBootsRedisSettingsSayWhenSluiceNamesNoServer(RedisServer redis) {
        runner.withPropertyValues(FIRST_CALL_TIMEOUT, "sluice.store=redis", "spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + redis.port(), "spring.data.redis.database=3").run(context -> {
            decide(context, "boot-settings");
            assertThat(redis.cli("-n", "3", "EXISTS", "sluice:{boot-settings}:fw60000")).isEqualTo("1");
        });
    }

    @Test
    void prefersItsOwnAddressToSpringBootsRedisSettings(RedisServer redis) {
        runner.withPropertyValues(FIRST_CALL_TIMEOUT, "sluice.store=redis", "sluice.redis.address=" + redis.address(),
                "spring.data.redis.url=redis://127.0.0.1:1").run(context -> {
            decide(context, "own-address");
            assertThat(redis.cli("EXISTS", "sluice:{own-address}:fw60000")).isEqualTo("1");
        });
    }

    @Test
    void connectsThroughSentinelWhenSpringBootsRedisSettingsNameIt() {
        try (RedisServer master = RedisServer.start(); RedisServer sentinel = RedisServer.startSentinel(master, "primary")) {
            runner.withPropertyValues(FIRST_CALL_TIMEOUT, "sluice.store=redis", "spring.data.redis.sentinel.master=primary",
                    "spring.data.redis.sentinel.nodes=127.0.0.1:" + sentinel.port()).run(context -> {
                decide(context, "through-sentinel");
                assertThat(master.cli("EXISTS", "sluice:{through-sentinel}:fw60000")).isEqualTo("1");
            });
        }
    }

    @Test
    void takesTheDecisionTimeoutFromSluiceThenFromSpringBootForItsOwnClient(RedisServer redis) {
        String[] ownClient = {"sluice.store=redis", "sluice.redis.address=" + redis.address(),
            "spring.data.redis.timeout=300ms"};
        runner.withPropertyValues(ownClient).run(context ->
                assertThat(timeoutWhilePaused(context, redis)).hasMessage("Redis did not answer within 300 ms"));
        runner.withPropertyValues(ownClient).withPropertyValues("sluice.redis.timeout=200ms").run(context ->
                assertThat(timeoutWhilePaused(context, redis)).hasMessage("Redis did not answer within 200 ms"));
    }

    @Test
    void leavesTheApplicationsOwnClientToTheStoresDefaultTimeout(RedisServer redis) {
        runner.withPropertyValues("sluice.store=redis", "spring.data.redis.timeout=300ms")
                .withBean(RedissonClient.class, () -> RedisClients.connect(redis),
                        definition -> definition.setDestroyMethodName("shutdown"))
                .run(context -> assertThat(timeoutWhilePaused(context, redis))
                        .hasMessage("Redis did not answer within 100 ms"));
    }

    /** What a decision fails with while Redis holds back every script. */
    private static StoreUnavailableException timeoutWhilePaused(AssertableApplicationContext context, RedisServer redis) {
        RateLimitStore store = context.getBean(RateLimitStore.class);
        List<Tier> tiers = List.of(Tier.of(1_000, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW));
        try {
            store.tryAcquire("timeout", tiers, 1);
        } catch (StoreUnavailableException slowStart) {
            // Only connecting; whether this first call made it does not matter.
        }
        redis.cli("CLIENT", "PAUSE", "5000", "WRITE");
        try {
            store.tryAcquire("timeout", tiers, 1);
            throw new AssertionError("decided while Redis was paused");
        } catch (StoreUnavailableException e) {
            return e;
        } finally {
            redis.cli("CLIENT", "UNPAUSE");
        }
    }

    private static void decide(AssertableApplicationContext context, String key) {
        assertThat(context.getBean(RateLimitStore.class)
                .tryAcquire(key, List.of(Tier.of(1, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW)), 1).allowed())
                .isTrue();
    }
}
