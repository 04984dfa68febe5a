package dev.sluice.boot;

import dev.sluice.redisson.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Unblocking callers and changing limits over HTTP with {@code sluice.store=redis}, against a redis-server the test starts. */
class RedisHttpOperationsTest extends HttpOperationsContract {

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
}
