package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.test.app.OtpApp;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;

/**
 * An application configured for Redis, tested with the annotation's default: the limiters decide
 * in an in-memory store on the test clock, and nothing connects to Redis.
 */
@SpringBootTest(classes = OtpApp.class, properties = {"sluice.store=redis", "sluice.redis.address=redis://127.0.0.1:1"})
@AutoConfigureSluiceTest
class InMemoryByDefaultTest {

    @Test
    void theStoreIsInMemoryAndNoRedisClientIsMade(@Autowired RateLimitStore store, @Autowired ApplicationContext context) {
        assertThat(store).isInstanceOf(InMemoryRateLimitStore.class);
        assertThat(context.getBeanNamesForType(RedissonClient.class)).isEmpty();
        assertThat(context.getBeanNamesForType(RateLimitStore.class)).containsExactly("sluiceTestStore");
    }
}
