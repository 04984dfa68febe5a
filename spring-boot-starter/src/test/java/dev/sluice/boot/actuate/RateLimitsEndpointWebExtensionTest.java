package dev.sluice.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiterRegistry;
import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/** What {@code DELETE /actuator/ratelimits/{limiter}/{key}} answers when the store cannot be reached. */
class RateLimitsEndpointWebExtensionTest {

    /** A limited method, for its limiter. */
    static class Otp {
        @RateLimited(name = "otp-ip", key = "#ip", limit = 3, window = "1m", blockFor = "15m")
        public void send(String ip) {
        }
    }

    @Test
    void aStoreThatCannotBeReachedIs503NamingNoKey() {
        try (RedisServer redis = RedisServer.start()) {
            RedissonClient client = RedisClients.connect(redis);
            try {
                // A second, not the default 100 ms: a busy machine must not turn the reset while Redis answers into
                // a 503; the suspended server is still not answered within it.
                RedissonRateLimitStore store = RedissonRateLimitStore.builder(client).timeout(Duration.ofSeconds(1))
                        .build();
                MethodRateLimiter limits = MethodRateLimiter.builder()
                        .registry(RateLimiterRegistry.builder().store(store).build()).build();
                limits.validate(Otp.class);
                RateLimitsEndpointWebExtension web = new RateLimitsEndpointWebExtension(
                        new RateLimitsEndpoint(limits.registry(), new RateLimitStatistics(0),
                                new LimitChanges(), KeyMask.of(new SluiceProperties())));
                assertThat(web.reset("otp-ip", new String[] {"203.0.113.9"}).getStatus())
                        .as("while Redis answers").isEqualTo(WebEndpointResponse.STATUS_NO_CONTENT);

                redis.suspend();
                try {
                    WebEndpointResponse<Void> answer = web.reset("otp-ip", new String[] {"203.0.113.9"});
                    assertThat(answer.getStatus()).isEqualTo(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
                    assertThat(answer.getBody()).isNull();
                } finally {
                    redis.resume();
                }
            } finally {
                RedisClients.shutDown(client);
            }
        }
    }
}
