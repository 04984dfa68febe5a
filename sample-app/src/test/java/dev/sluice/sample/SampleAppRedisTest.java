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
        // Answers here must not depend on how busy the machine is; outages have tests of their own.
        registry.add("sluice.redis.timeout", () -> "10s");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @Override
    String storeName() {
        return "RedissonRateLimitStore";
    }

    @Override
    String storeState() {
        return "\"CLOSED\"";
    }
}
