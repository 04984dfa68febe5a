package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code sluice.redis.key-hash-secret} reaches the Redis store. */
@ExtendWith(RedisExtension.class)
class KeyHashSecretPropertyTest {

    private static final List<Tier> TIERS = List.of(Tier.of(1, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW));

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

    @Test
    void keysReachRedisAsTheirHmacOnly(RedisServer redis) {
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address(),
                "sluice.redis.key-prefix=hashed", "sluice.redis.timeout=10s",
                "sluice.redis.key-hash-secret=a secret of more than sixteen bytes").run(context -> {
                    RateLimitStore store = context.getBean(RateLimitStore.class);
                    assertThat(store.tryAcquire("otp:+447700900123", TIERS, 1).allowed()).isTrue();
                    assertThat(store.tryAcquire("otp:+447700900123", TIERS, 1).allowed()).isFalse();

                    assertThat(redis.cli("--scan", "--pattern", "hashed:*").split("\\s+")).hasSize(1)
                            .allMatch(key -> key.matches("hashed:\\{[0-9a-f]{64}\\}:fw60000"));
                });
    }

    @Test
    void aSecretTooShortToKeepKeysSecretFailsStartUp(RedisServer redis) {
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.address=" + redis.address(),
                "sluice.redis.key-hash-secret=short").run(context -> assertThat(context).hasFailed()
                        .getFailure().rootCause().hasMessageContaining("at least 16 bytes"));
    }
}
