package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import dev.sluice.test.app.OtpApp;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A test that keeps the application's Redis store: fresh counts in each test, under a key prefix
 * of the test's own, and a clock that refuses to move beside a store that counts by Redis's.
 */
@SpringBootTest(classes = OtpApp.class)
@AutoConfigureSluiceTest(store = AutoConfigureSluiceTest.Store.CONFIGURED)
class RedisStoreClearedTest {

    private static final RedisServer REDIS = RedisServer.start();

    /** A key the application wrote under its configured prefix, which no test chose. */
    private static final String APPLICATIONS_KEY = "shared:{+447700900789}:otp";

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.store", () -> "redis");
        registry.add("sluice.redis.address", REDIS::address);
        registry.add("sluice.redis.key-prefix", () -> "shared");
        registry.add("sluice.redis.timeout", () -> "10s");
        REDIS.cli("SET", APPLICATIONS_KEY, "the application's");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @Autowired
    private OtpApp.OtpService otp;

    @RepeatedTest(2)
    void eachTestUsesTheWholeLimitUnderAPrefixOfItsOwnAndTheApplicationsKeysStay() {
        for (int i = 0; i < 3; i++) {
            otp.send("+447700900789");
        }
        assertThatThrownBy(() -> otp.send("+447700900789")).isInstanceOf(RateLimitExceededException.class);

        assertThat(REDIS.cli("KEYS", "shared-test-*")).as("the test's own keys").contains("+447700900789");
        assertThat(REDIS.cli("GET", APPLICATIONS_KEY)).isEqualTo("the application's");
    }

    @Test
    void movingTheClockBesideRedisFailsNamingTheFix(@Autowired MutableClock clock) {
        assertThatThrownBy(() -> clock.advance(Duration.ofMinutes(15))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("RedissonRateLimitStore")
                .hasMessageContaining("@AutoConfigureSluiceTest, whose store is IN_MEMORY");
    }
}
