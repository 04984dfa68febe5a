package dev.sluice.boot;

import dev.sluice.redisson.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The WebFlux contract with {@code sluice.store=redis}, against a redis-server the test starts. */
class RedisReactiveHttpLimitsTest extends ReactiveHttpLimitsContract {

    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.store", () -> "redis");
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
