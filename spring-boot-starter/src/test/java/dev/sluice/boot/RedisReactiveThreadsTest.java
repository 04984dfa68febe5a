package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.threadsapp.ThreadsApp;
import dev.sluice.redisson.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

/**
 * Where a WebFlux application limited through the Redis store goes on once Redis has decided:
 * on the store's completion threads ({@code sluice-redis-<n>}), or on the request's own event
 * loop when the decision was in before the chain went on; never on the common fork-join pool nor
 * on Redisson's netty threads, for an annotated method and for an HTTP rule, admitted or refused. Against a redis-server the test starts.
 */
@SpringBootTest(classes = ThreadsApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.config.name=threads", "spring.main.web-application-type=reactive", "sluice.store=redis",
            "sluice.http.rules[0].name=ruled", "sluice.http.rules[0].path=/ruled",
            "sluice.http.rules[0].tiers[0].limit=1", "sluice.http.rules[0].tiers[0].window=1h"})
@Timeout(60)
class RedisReactiveThreadsTest {

    private static final RedisServer REDIS = RedisServer.start();

    /**
     * The store's completion threads; or the request's own thread, where the decision was in
     * before the chain went on (as it would without Sluice): Reactor Netty's event loop, or
     * reactive Tomcat's, which Spring Boot 4 names {@code webflux-http-nio} and 3.5
     * {@code http-nio-auto-<n>-exec}. Never the common pool, nor Redisson's.
     */
    private static final String WHERE_A_REQUEST_GOES_ON =
            "(sluice-redis|webflux-http-nio|reactor-http-nio)-\\d+|http-nio-auto-\\d+-exec-\\d+";

    @LocalServerPort
    private int port;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.redis.address", REDIS::address);
        // Threads are under test here, not outages: no decision may time out on a busy machine.
        registry.add("sluice.redis.timeout", () -> "10s");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    private EntityExchangeResult<String> get(String path) {
        return LocalServer.client(port).get().uri(path).exchange().expectBody(String.class).returnResult();
    }

    @Test
    void anAnnotatedReactiveMethodRunsOnTheStoresCompletionThreadsAndSoDoesItsRejection() {
        assertServedByTheStoresThreads("/annotated");
    }

    @Test
    void aRequestLimitedByAnHttpRuleRunsOnTheStoresCompletionThreadsAndSoDoesItsRejection() {
        assertServedByTheStoresThreads("/ruled");
    }

    private void assertServedByTheStoresThreads(String path) {
        EntityExchangeResult<String> admitted = get(path);
        EntityExchangeResult<String> refused = get(path);

        assertThat(admitted.getStatus().value()).isEqualTo(200);
        assertThat(admitted.getResponseBody()).as("the thread the admitted handler ran on")
                .matches(WHERE_A_REQUEST_GOES_ON);
        assertThat(admitted.getResponseHeaders().getFirst("X-Committed-On")).as("the admitted response's thread")
                .matches(WHERE_A_REQUEST_GOES_ON);
        assertThat(refused.getStatus().value()).isEqualTo(429);
        assertThat(refused.getResponseHeaders().getFirst("X-Committed-On")).as("the refused response's thread")
                .matches(WHERE_A_REQUEST_GOES_ON);
    }
}
