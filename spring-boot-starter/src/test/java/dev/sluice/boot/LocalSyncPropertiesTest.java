package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.RateLimited;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.metrics.SluiceMetricsAutoConfiguration;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code sluice.redis.local-sync.*} and {@code sluice.limits.<name>.local-sync} choose which limiters count locally. */
@ExtendWith(RedisExtension.class)
class LocalSyncPropertiesTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceMetricsAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    /** A hot limiter and a cold one. */
    public static class Catalog {
        @RateLimited(name = "hot", limit = 1000, window = "1s", algorithm = Algorithm.FIXED_WINDOW)
        public String read() {
            return "read";
        }

        @RateLimited(name = "cold", limit = 10, window = "1m")
        public String write() {
            return "written";
        }
    }

    /** A token bucket, which local counting cannot honour. */
    public static class Bucketed {
        @RateLimited(limit = 10, window = "1s", algorithm = Algorithm.TOKEN_BUCKET)
        public String call() {
            return "called";
        }
    }

    @Test
    void countsLocallyOnlyForTheLimitersThatSaySo(RedisServer redis) {
        runner.withBean(Catalog.class).withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address(),
                "sluice.limits.hot.local-sync=true").run(context -> {
                    assertThat(context.getBean(Catalog.class).read()).isEqualTo("read");
                    RateLimiterRegistry registry = context.getBean(RateLimiterRegistry.class);
                    assertThat(registry.find("hot").orElseThrow().store()).isInstanceOf(LocalSyncRateLimitStore.class);
                    assertThat(registry.storeOf("cold")).isNotInstanceOf(LocalSyncRateLimitStore.class);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    context.getBeansOfType(MeterBinder.class).values().forEach(binder -> binder.bindTo(meters));
                    assertThat(meters.get("sluice.local-sync.syncs").tag("outcome", "success").functionCounter().count())
                            .as("the first call's sync").isEqualTo(1);
                    assertThat(meters.get("sluice.local-sync.store.reachable").gauge().value()).isEqualTo(1);
                });
    }

    @Test
    void countsLocallyForEveryLimiterButThoseThatSayNot(RedisServer redis) {
        runner.withBean(Catalog.class).withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address(),
                "sluice.redis.local-sync.enabled=true", "sluice.redis.local-sync.interval=250ms",
                "sluice.limits.cold.local-sync=false").run(context -> {
                    RateLimiterRegistry registry = context.getBean(RateLimiterRegistry.class);
                    assertThat(registry.storeOf("hot")).isInstanceOf(LocalSyncRateLimitStore.class);
                    assertThat(registry.storeOf("partner-api")).isInstanceOf(LocalSyncRateLimitStore.class);
                    assertThat(registry.find("cold").orElseThrow().store()).isNotInstanceOf(LocalSyncRateLimitStore.class);
                });
    }

    @Test
    void aLimiterWhoseTiersItCannotHonourFailsStartUpNamingTheMethod(RedisServer redis) {
        runner.withBean(Bucketed.class).withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address(),
                "sluice.redis.local-sync.enabled=true").run(context -> assertThat(context).hasFailed()
                        .getFailure().hasStackTraceContaining("Bucketed.call")
                        .rootCause().hasMessageContaining("LocalSyncRateLimitStore does not support")
                        .hasMessageContaining("TOKEN_BUCKET"));
    }

    @Test
    void needsTheRedisStore() {
        runner.withBean(Catalog.class).withPropertyValues("sluice.limits.hot.local-sync=true").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining("sluice.store=redis"));
    }
}
