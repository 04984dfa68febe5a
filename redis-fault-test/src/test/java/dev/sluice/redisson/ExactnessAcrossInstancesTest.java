package dev.sluice.redisson;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import dev.sluice.tck.RateAlgorithms;
import org.redisson.api.RedissonClient;

/**
 * Four application instances (four Redisson clients, each with its own store) hammer one key
 * from 16 threads each, deciding with the server's time: together they admit exactly the limit.
 */
@ExtendWith(RedisExtension.class)
class ExactnessAcrossInstancesTest {

    private static final int INSTANCES = 4;
    private static final int THREADS_PER_INSTANCE = 16;
    private static final int CALLS_PER_THREAD = 20;
    private static final int LIMIT = 500;

    @ParameterizedTest
    @RateAlgorithms
    void onASingleServer(Algorithm algorithm, RedisServer server) throws Exception {
        assertExactAcrossInstances(algorithm, server.time(), () -> RedisClients.connect(server));
    }

    @ParameterizedTest
    @RateAlgorithms
    void onACluster(Algorithm algorithm, RedisCluster cluster) throws Exception {
        assertExactAcrossInstances(algorithm, cluster.masters().get(0).time(), () -> RedisClients.connect(cluster));
    }

    private static void assertExactAcrossInstances(Algorithm algorithm, Instant serverTime,
                                                   Supplier<RedissonClient> connect) throws Exception {
        List<RedissonClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(INSTANCES * THREADS_PER_INSTANCE);
        try {
            for (int i = 0; i < INSTANCES; i++) {
                clients.add(connect.get());
            }
            Tier tier = Tier.of(LIMIT, windowFarFromItsEnd(serverTime), algorithm);
            String key = "exact:" + UUID.randomUUID();
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> admitted = new ArrayList<>();
            for (RedissonClient client : clients) {
                RateLimitStore store = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT).build();
                for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                    admitted.add(pool.submit(() -> {
                        go.await();
                        int count = 0;
                        for (int c = 0; c < CALLS_PER_THREAD; c++) {
                            if (store.tryAcquire(key, List.of(tier), 1).allowed()) {
                                count++;
                            }
                        }
                        return count;
                    }));
                }
            }
            go.countDown();
            int total = 0;
            for (Future<Integer> result : admitted) {
                total += result.get(2, TimeUnit.MINUTES);
            }
            assertThat(total).as("admitted of %d attempts", INSTANCES * THREADS_PER_INSTANCE * CALLS_PER_THREAD)
                    .isEqualTo(LIMIT);

            List<String> written = clients.get(0).getKeys().getKeysStreamByPattern("*" + key + "*").toList();
            assertThat(written).isNotEmpty().allSatisfy(entry -> assertThat(clients.get(0).getKeys()
                    .remainTimeToLive(entry)).as("TTL of %s", entry).isPositive());
        } finally {
            pool.shutdownNow();
            clients.forEach(RedissonClient::shutdown);
        }
    }

    /**
     * A window of about a day whose current instance (windows are aligned to the epoch) has more
     * than ten minutes left on the server's clock, so that no window boundary falls into the test.
     */
    private static Duration windowFarFromItsEnd(Instant serverTime) {
        long now = serverTime.toEpochMilli();
        Duration window = Duration.ofDays(1);
        while (window.toMillis() - now % window.toMillis() < Duration.ofMinutes(10).toMillis()) {
            window = window.plusHours(1);
        }
        return window;
    }
}
