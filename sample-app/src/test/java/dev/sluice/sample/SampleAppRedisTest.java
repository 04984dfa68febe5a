package dev.sluice.sample;

import dev.sluice.redisson.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The sample application with its redis profile, against a redis-server the test starts. */
@ActiveProfiles("redis")
class SampleAppRedisTest extends SampleAppContract {

    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.redis.address", REDIS::address);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @Override
    String storeName() {
        return "RedissonRateLimitStore";
    }
}
