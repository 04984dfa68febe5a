package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redisson.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample application with its redis and local-sync profiles: the per-organization limits
 * count in the application and sync with a redis-server the test starts; one instance alone
 * answers as with the Redis store.
 */
@ActiveProfiles({"redis", "local-sync"})
class SampleAppLocalSyncTest extends SampleAppContract {

    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.redis.address", REDIS::address);
        registry.add("sluice.redis.timeout", () -> "10s");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @Test
    void theOrganizationLimitsCountLocallyAndTheOthersInRedis() {
        assertThat(send("GET", "/api/organizations/acme/products/p1", null).getStatus().value()).isIn(200, 404);
        String limits = send("GET", "/actuator/ratelimits", null).getResponseBody();
        assertThat(limiter(limits, "org-reads")).contains("\"algorithm\":\"SLIDING_WINDOW\"")
                .contains("\"store\":\"LocalSyncRateLimitStore\"");
        assertThat(limiter(limits, "org-writes")).contains("\"store\":\"LocalSyncRateLimitStore\"");
        assertThat(limiter(limits, "otp-ip")).contains("\"store\":\"RedissonRateLimitStore\"");
    }

    /** One limiter's entry in the endpoint's listing. */
    private static String limiter(String limits, String name) {
        int start = limits.indexOf("{\"name\":\"" + name + "\"");
        assertThat(start).as("%s in %s", name, limits).isNotNegative();
        int end = limits.indexOf("{\"name\":", start + 1);
        return limits.substring(start, end < 0 ? limits.length() : end);
    }

    /**
     * A sliding window weighs the previous window's writes by the share of it the last 10 s still
     * cover: 100 writes made within a second across a window's start weigh at least 90 a moment
     * later, so at most 10 more fit.
     */
    @Override
    int writesPastTheLimitNearAWindowsEnd() {
        return 10;
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
