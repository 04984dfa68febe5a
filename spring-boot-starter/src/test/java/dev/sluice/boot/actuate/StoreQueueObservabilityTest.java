package dev.sluice.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.boot.OverloadingStore;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.metrics.SluiceMetricsAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The queue a store's decisions wait in, as metrics and the health component show it, and the
 * calls it refuses when full: rejections whatever the outage settings say.
 */
class StoreQueueObservabilityTest {

    private static final Tier TIER = Tier.of(10, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceMetricsAutoConfiguration.class,
                    SluiceHealthAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    private final ApplicationContextRunner overloading = runner.withBean(RateLimitStore.class, OverloadingStore::new);

    /** The meter registry, with every binder of the context bound to it, as Spring Boot binds them. */
    private static MeterRegistry meters(AssertableApplicationContext context) {
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        context.getBeansOfType(MeterBinder.class).values().forEach(binder -> binder.bindTo(meters));
        return meters;
    }

    private static RateLimiter limiter(AssertableApplicationContext context) {
        return context.getBean(RateLimiterRegistry.class).limiterBuilder().name("api").tier(TIER).build();
    }

    @Test
    void gaugesShowTheQueueAndACounterTheDecisionsItCouldNotHold() {
        overloading.run(context -> {
            MeterRegistry meters = meters(context);
            OverloadingStore store = (OverloadingStore) context.getBean(RateLimitStore.class);
            RateLimiter limiter = limiter(context);

            assertThat(meters.get("sluice.store.queue").tag("store", "InMemoryRateLimitStore").gauge().value()).isZero();
            assertThat(meters.get("sluice.store.queue.capacity").gauge().value()).isEqualTo(OverloadingStore.CAPACITY);
            assertThat(meters.get("sluice.store.overloaded").functionCounter().count()).isZero();

            store.overloaded.set(true);
            limiter.tryAcquire("k");
            limiter.tryAcquire("k");

            assertThat(meters.get("sluice.store.queue").gauge().value()).isEqualTo(OverloadingStore.CAPACITY);
            assertThat(meters.get("sluice.store.overloaded").functionCounter().count()).isEqualTo(2);
            assertThat(meters.get("sluice.decisions").tag("limiter", "api").tag("outcome", "overloaded").counter()
                    .count()).isEqualTo(2);
            assertThat(meters.get("sluice.decisions").tag("limiter", "api").tag("outcome", "rejected").counter()
                    .count()).isZero();
        });
    }

    @Test
    void aStoreWithoutAQueueHasNoQueueMeters() {
        runner.run(context -> assertThat(meters(context).find("sluice.store.queue").gauge()).isNull());
    }

    @Test
    void theHealthComponentShowsTheQueueAndStaysUpWhileItIsFull() {
        overloading.run(context -> {
            OverloadingStore store = (OverloadingStore) context.getBean(RateLimitStore.class);
            store.overloaded.set(true);
            limiter(context).tryAcquire("k");

            HealthReport health = context.getBean(RateLimitStoreHealthIndicator.class).report();

            assertThat(health.status()).isEqualTo("UP");
            assertThat(health.details()).containsEntry("queue",
                    Map.of("queued", OverloadingStore.CAPACITY, "capacity", OverloadingStore.CAPACITY, "overloaded", 1L));
        });
    }

    @Test
    void theHealthComponentOfAStoreWithoutAQueueShowsNone() {
        runner.run(context -> assertThat(context.getBean(RateLimitStoreHealthIndicator.class).report().details())
                .doesNotContainKey("queue"));
    }

    @Test
    void noOutageSettingMakesAFullQueueTakeTheFailurePolicy() {
        overloading.withPropertyValues("sluice.failure-policy=fail-open",
                "sluice.circuit-breaker.record-exceptions=java.lang.RuntimeException").run(context -> {
                    OverloadingStore store = (OverloadingStore) context.getBean(RateLimitStore.class);
                    store.overloaded.set(true);

                    Decision decision = limiter(context).tryAcquire("k");

                    assertThat(decision.allowed()).as("not admitted by fail-open").isFalse();
                    assertThat(decision.retryAfter()).isEqualTo(OverloadingStore.RETRY_AFTER);
                    assertThat(meters(context).get("sluice.decisions").tag("outcome", "error").counter().count())
                            .isZero();
                });
    }
}
