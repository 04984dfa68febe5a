package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.test.app.OtpApp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.RepeatedTest;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** With {@code sluice.store=redis}, each test starts with fresh counts too. */
@SpringBootTest(classes = OtpApp.class)
@AutoConfigureSluiceTest
class RedisStoreClearedTest {

    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.store", () -> "redis");
        registry.add("sluice.redis.address", REDIS::address);
        registry.add("sluice.redis.timeout", () -> "10s");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @Autowired
    private OtpApp.OtpService otp;

    @RepeatedTest(2)
    void eachTestUsesTheWholeLimit() {
        for (int i = 0; i < 3; i++) {
            otp.send("+447700900789");
        }
        assertThatThrownBy(() -> otp.send("+447700900789")).isInstanceOf(RateLimitExceededException.class);
    }
}
