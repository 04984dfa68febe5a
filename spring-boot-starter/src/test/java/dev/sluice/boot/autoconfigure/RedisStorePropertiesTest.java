package dev.sluice.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.OverloadPolicy;
import dev.sluice.RateLimitStore;
import dev.sluice.boot.LoggedMessages;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The Redis store's queue settings ({@code sluice.redis.batch-size}, {@code max-queued},
 * {@code max-queue-wait}, {@code on-overload}), and its warm-up: start-up waits, for at most
 * {@code sluice.redis.warm-up-timeout}, until the store has connected and loaded its script, and
 * goes on with a warning when Redis cannot be reached.
 */
@ExtendWith(RedisExtension.class)
class RedisStorePropertiesTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
            .withPropertyValues("sluice.store=redis");

    /** Whether Redis has loaded a script: the store's, once it warmed up. */
    private static boolean scriptLoaded(RedisServer redis) {
        return !redis.cli("INFO", "memory").contains("number_of_cached_scripts:0");
    }

    @Test
    void theQueueSettingsAreTakenAndTheOverloadPolicyIsBoundFromItsConfigurationName(RedisServer redis) {
        runner.withPropertyValues("sluice.redis.address=" + redis.address(), "sluice.redis.batch-size=1",
                "sluice.redis.max-queued=500", "sluice.redis.max-queue-wait=250ms",
                "sluice.redis.on-overload=local-fallback").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(RedissonRateLimitStore.class);
                    SluiceProperties.Redis settings = context.getBean(SluiceProperties.class).getRedis();
                    assertThat(settings.getBatchSize()).isEqualTo(1);
                    assertThat(settings.getMaxQueued()).isEqualTo(500);
                    assertThat(settings.getMaxQueueWait()).isEqualTo(Duration.ofMillis(250));
                    assertThat(settings.getOnOverload()).isEqualTo(OverloadPolicy.LOCAL_FALLBACK);
                });
    }

    @Test
    void theOverloadPolicyIsRejectUnlessSet() {
        assertThat(new SluiceProperties().getRedis().getOnOverload()).isEqualTo(OverloadPolicy.REJECT);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "sluice.redis.batch-size=0      | sluice.redis.batch-size is invalid: batchSize must be within 1..1024, was 0",
        "sluice.redis.batch-size=1025   | sluice.redis.batch-size is invalid: batchSize must be within 1..1024",
        "sluice.redis.max-queued=0      | sluice.redis.max-queued is invalid: maxQueued must be at least 1, was 0",
        "sluice.redis.max-queue-wait=0s | sluice.redis.max-queue-wait is invalid: maxQueueWait must be positive",
        "sluice.redis.warm-up-timeout=-1s | sluice.redis.warm-up-timeout is negative"})
    void aValueTheStoreCannotTakeFailsStartUpNamingTheProperty(String setting, String message, RedisServer redis) {
        runner.withPropertyValues("sluice.redis.address=" + redis.address(), setting).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context).getFailure().hasStackTraceContaining(message);
        });
    }

    @Test
    void anUnknownOverloadPolicyFailsStartUpNamingTheProperty(RedisServer redis) {
        runner.withPropertyValues("sluice.redis.address=" + redis.address(), "sluice.redis.on-overload=drop")
                .run(context -> assertThat(context).getFailure()
                        .hasStackTraceContaining("Failed to bind properties under 'sluice.redis.on-overload'"));
    }

    @Test
    void startUpWaitsUntilTheStoreHasConnectedAndLoadedItsScript() {
        try (RedisServer redis = RedisServer.start()) {
            // A hung Redis answers nothing until it runs again, a second from now.
            redis.suspend();
            AtomicBoolean resumed = new AtomicBoolean();
            ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
            try {
                later.schedule(() -> {
                    resumed.set(true);
                    redis.resume();
                }, 1, TimeUnit.SECONDS);
                runner.withPropertyValues("sluice.redis.address=" + redis.address(),
                        "sluice.redis.warm-up-timeout=30s").run(context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(resumed).as("ready only once Redis ran again").isTrue();
                            assertThat(scriptLoaded(redis)).as("the script loaded before the application was ready")
                                    .isTrue();
                        });
            } finally {
                later.shutdownNow();
                redis.resume();
            }
        }
    }

    @Test
    void startUpWaitsNoLongerThanTheWarmUpTimeoutAndSaysSo() {
        try (RedisServer redis = RedisServer.start(); LoggedMessages output = new LoggedMessages(StoreWarmUp.class)) {
            redis.suspend();
            try {
                long starting = System.nanoTime();
                runner.withPropertyValues("sluice.redis.address=" + redis.address(),
                        "sluice.redis.warm-up-timeout=300ms").run(context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(Duration.ofNanos(System.nanoTime() - starting)).isLessThan(Duration.ofSeconds(10));
                            assertThat(output.messages()).contains("RedissonRateLimitStore did not connect to Redis and load"
                                    + " its script within 300 ms (sluice.redis.warm-up-timeout). The application starts"
                                    + " anyway");
                            // Redis runs again before the client shuts down with the context.
                            redis.resume();
                        });
            } finally {
                redis.resume();
            }
        }
    }

    @Test
    void aRedisThatIsDownIsAWarningNamingWhatFailedNotAFailure() {
        try (RedisServer redis = RedisServer.start(); LoggedMessages output = new LoggedMessages(StoreWarmUp.class)) {
            redis.kill();
            runner.withPropertyValues("sluice.redis.address=" + redis.address()).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(output.messages()).contains("RedissonRateLimitStore could not connect to Redis and load its"
                        + " script: Redis failed: ").contains("The application starts anyway");
            });
        }
    }

    @Test
    void noWarmUpTimeoutLetsStartUpGoOnAtOnce() {
        try (RedisServer redis = RedisServer.start(); LoggedMessages output = new LoggedMessages(StoreWarmUp.class)) {
            redis.suspend();
            try {
                runner.withPropertyValues("sluice.redis.address=" + redis.address(), "sluice.redis.warm-up-timeout=0s")
                        .run(context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(output.messages()).as("nothing waited for").doesNotContain("did not connect");
                            redis.resume();
                        });
            } finally {
                redis.resume();
            }
        }
    }
}
