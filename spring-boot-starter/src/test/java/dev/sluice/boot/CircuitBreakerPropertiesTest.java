package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.Tier;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.annotation.Algorithm;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code sluice.circuit-breaker.record-exceptions} and {@code ignore-exceptions}: which store exceptions are outages. */
@ExtendWith(RedisExtension.class)
class CircuitBreakerPropertiesTest {

    private static final Tier TIER = Tier.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

    /** What a user's store throws when the quota service refuses to answer a request. */
    public static class QuotaServiceRefused extends RuntimeException {
        QuotaServiceRefused() {
            super("refused");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class RefusingStoreConfiguration {
        @Bean
        RateLimitStore refusingStore() {
            return new RateLimitStore() {
                @Override
                public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                    throw new QuotaServiceRefused();
                }

                @Override
                public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                    return CompletableFuture.failedFuture(new QuotaServiceRefused());
                }
            };
        }
    }

    private static RateLimiter limiter(MethodRateLimiter methods) {
        return methods.registry().limiterBuilder().name("quota").tier(TIER).build();
    }

    @Test
    void ignoredExceptionsOfTheStoreReachTheCallerInsteadOfTheFailurePolicy() {
        runner.withUserConfiguration(RefusingStoreConfiguration.class).withPropertyValues("sluice.failure-policy=fail-open")
                .run(context -> assertThat(limiter(context.getBean(MethodRateLimiter.class)).tryAcquire("k").allowed())
                        .as("an outage by default: admitted by the policy").isTrue());
        runner.withUserConfiguration(RefusingStoreConfiguration.class).withPropertyValues("sluice.failure-policy=fail-open",
                "sluice.circuit-breaker.ignore-exceptions=" + QuotaServiceRefused.class.getName())
                .run(context -> assertThatThrownBy(() -> limiter(context.getBean(MethodRateLimiter.class)).tryAcquire("k"))
                        .isInstanceOf(QuotaServiceRefused.class));
    }

    @Test
    void theRedisStoresBreakerRecordsTheConfiguredExceptionsAndOpensForAtLeastTheTimeout(RedisServer redis) {
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address(),
                "sluice.redis.timeout=2s",
                "sluice.circuit-breaker.record-exceptions=" + RedisConnectionException.class.getName()).run(context -> {
                    StoreCircuitBreaker breaker = context.getBean(RateLimitStore.class).circuitBreaker().orElseThrow();
                    assertThat(breaker.isOutage(new RedisConnectionException("refused"))).isTrue();
                    assertThat(breaker.isOutage(new RedisException("ERR script"))).isFalse();
                    assertThat(breaker.openDuration()).isEqualTo(Duration.ofSeconds(2));
                });
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address()).run(context -> {
            StoreCircuitBreaker breaker = context.getBean(RateLimitStore.class).circuitBreaker().orElseThrow();
            assertThat(breaker.isOutage(new RedisException("ERR script"))).as("by default").isTrue();
            assertThat(breaker.isOutage(new NullPointerException())).as("by default").isFalse();
        });
    }
}
