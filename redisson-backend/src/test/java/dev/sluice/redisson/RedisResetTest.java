package dev.sluice.redisson;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;

/** What resetting a key and clearing a store send to Redis; what they do is the contract's business. */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisResetTest {

    private static final List<Tier> ALL_ALGORITHMS = List.of(Tier.of(5, ofMinutes(1), FIXED_WINDOW),
            Tier.of(5, ofMinutes(1), SLIDING_WINDOW), Tier.of(5, ofMinutes(1), SLIDING_LOG),
            Tier.of(5, ofMinutes(1), TOKEN_BUCKET));

    private final MutableClock clock = new MutableClock(Instant.parse("2200-01-01T00:00:30Z"));
    private RedisServer server;
    private RedissonClient client;

    @BeforeAll
    void connect(RedisServer server) {
        this.server = server;
        this.client = RedisClients.connect(server);
    }

    @AfterAll
    void disconnect() {
        client.shutdown();
    }

    @BeforeEach
    void emptyRedis() {
        server.flushAll();
    }

    private RedissonRateLimitStore.Builder store() {
        return RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT);
    }

    private Map<String, String> commandStats() {
        return client.getRedisNodes(RedisNodes.SINGLE).getInstance().info(RedisNode.InfoSection.COMMANDSTATS);
    }

    @Test
    void aResetIsOneDelOfEveryKeyOfTheStoreKey() {
        RedissonRateLimitStore store = store().build();
        store.tryAcquire("otp:10.0.0.1", ALL_ALGORITHMS, 1);
        store.tryAcquire("otp:10.0.0.2", ALL_ALGORITHMS, 1);
        server.cli("CONFIG", "RESETSTAT");

        store.reset("otp:10.0.0.1", ALL_ALGORITHMS);

        Map<String, String> stats = commandStats();
        assertThat(stats.get("cmdstat_del")).startsWith("calls=1,");
        assertThat(stats.keySet()).as("sent besides the DEL").allMatch(command -> command.equals("cmdstat_del")
                || command.startsWith("cmdstat_config") || command.equals("cmdstat_ping"));
        assertThat(client.getKeys().getKeysStream()).allMatch(key -> key.startsWith("sluice:{otp:10.0.0.2}:"))
                .hasSize(5);
    }

    @Test
    void aResetGoesThroughTheStoresCircuitBreaker() {
        StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().failureThreshold(1)
                .openDuration(RedisClients.PATIENT).build();
        RedissonRateLimitStore store = store().circuitBreaker(breaker).build();
        breaker.tryAcquirePermit().onFailure(new StoreUnavailableException("an earlier failure", ofMinutes(1)));
        server.cli("CONFIG", "RESETSTAT");

        assertThatThrownBy(() -> store.reset("otp:+447700900123", ALL_ALGORITHMS))
                .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("is not asked while it fails")
                .hasMessageNotContaining("+447700900123");
        assertThat(commandStats()).doesNotContainKey("cmdstat_del");
    }

    @Test
    void aResetFailsWithinTheStoresTimeoutNamingNoKey() {
        try (RedisServer paused = RedisServer.start()) {
            RedissonClient pausedClient = RedisClients.connect(paused);
            try {
                RedissonRateLimitStore store = RedissonRateLimitStore.builder(pausedClient).clock(clock).build();
                // Decided by a store that a cold client cannot time out: the key is there to reset.
                RedissonRateLimitStore.builder(pausedClient).clock(clock).timeout(RedisClients.PATIENT).build()
                        .tryAcquire("otp:+447700900123", ALL_ALGORITHMS, 1);
                paused.suspend();
                try {
                    long start = System.nanoTime();
                    assertThatThrownBy(() -> store.reset("otp:+447700900123", ALL_ALGORITHMS))
                            .isInstanceOf(StoreUnavailableException.class)
                            .hasMessage("Redis did not answer within 100 ms");
                    assertThat(System.nanoTime() - start).as("nanoseconds").isLessThan(2_000_000_000L);
                } finally {
                    paused.resume();
                }
            } finally {
                RedisClients.shutDown(pausedClient);
            }
        }
    }

    @Test
    void clearDeletesTheKeysUnderItsPrefixOnlyOnEveryMasterOfACluster(RedisCluster cluster) {
        RedissonClient clusterClient = RedisClients.connect(cluster);
        try {
            cluster.flushAll();
            RedissonRateLimitStore app1 = RedissonRateLimitStore.builder(clusterClient).keyPrefix("app1")
                    .clock(clock).timeout(RedisClients.PATIENT).build();
            RedissonRateLimitStore app1Other = RedissonRateLimitStore.builder(clusterClient).keyPrefix("app1:other")
                    .clock(clock).timeout(RedisClients.PATIENT).build();
            for (int i = 0; i < 100; i++) {
                app1.tryAcquire("k" + i, ALL_ALGORITHMS, 1);
                app1Other.tryAcquire("k" + i, ALL_ALGORITHMS, 1);
            }
            clusterClient.getBucket("app1:unrelated").set("kept");
            assertThat(cluster.masters()).as("keys on every master")
                    .allMatch(master -> Long.parseLong(master.cli("DBSIZE")) > 0);

            app1.clear();

            assertThat(clusterClient.getKeys().getKeysStream())
                    .allMatch(key -> key.startsWith("app1:other:{") || key.equals("app1:unrelated"))
                    .hasSize(100 * 5 + 1);
        } finally {
            RedisClients.shutDown(clusterClient);
            cluster.flushAll();
        }
    }

    @Test
    void aPrefixHoldingGlobCharactersMatchesOnlyItself() {
        assertThat(RedissonRateLimitStore.keyPattern("a*b?[c]\\")).isEqualTo("a\\*b\\?\\[c\\]\\\\:{*");
        RedissonRateLimitStore starred = store().keyPrefix("app*").build();
        RedissonRateLimitStore plain = store().keyPrefix("app1").build();
        starred.tryAcquire("k", ALL_ALGORITHMS, 1);
        plain.tryAcquire("k", ALL_ALGORITHMS, 1);

        starred.clear();

        assertThat(client.getKeys().getKeysStream()).allMatch(key -> key.startsWith("app1:{")).hasSize(5);
    }
}
