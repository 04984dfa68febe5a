package dev.sluice.redisson;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/**
 * Three application instances (three Redisson clients, each with its own store) run calls of one
 * key from 16 threads each under a concurrency tier of 4, deciding with the server's time.
 *
 * <p>Promises attacked: a concurrency tier shared through Redis never lets more than its limit of
 * calls run at once, whichever instances they run in, on a single server as on a cluster; and
 * every permit given back is free again once the calls have ended. The time-weighted average of
 * calls running is printed, not asserted: it measures the machine's load as much as Sluice (3.0
 * to 3.6 of 4 alone, 1.4 beside two whole builds, while Redis held 3.9 permits on average).
 */
@ExtendWith(RedisExtension.class)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ConcurrencyAcrossInstancesTest {

    private static final int INSTANCES = 3;
    private static final int THREADS_PER_INSTANCE = 16;
    private static final int PERMITS = 4;
    private static final Tier TIER = Tier.concurrency(PERMITS, Duration.ofSeconds(30));
    /** Calls run this long before the average is measured: the JVM compiles the store's paths meanwhile. */
    private static final Duration WARM_UP = Duration.ofSeconds(2);
    private static final Duration RUN = Duration.ofSeconds(3);

    @Test
    void onASingleServerNoMoreThanTheLimitRun(RedisServer server) throws Exception {
        Occupancy occupancy = run(() -> RedisClients.connect(server));
        assertThat(occupancy.max()).as("most calls running at once").isLessThanOrEqualTo(PERMITS);
    }

    @Test
    void onAClusterNoMoreThanTheLimitRun(RedisCluster cluster) throws Exception {
        Occupancy occupancy = run(() -> RedisClients.connect(cluster));
        assertThat(occupancy.max()).as("most calls running at once").isLessThanOrEqualTo(PERMITS);
    }

    private static Occupancy run(Supplier<RedissonClient> connect) throws Exception {
        List<RedissonClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(INSTANCES * THREADS_PER_INSTANCE);
        try {
            List<RateLimitStore> stores = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                RedissonClient client = connect.get();
                clients.add(client);
                // Patient: a loaded machine must not turn a slow decision into a failure.
                stores.add(RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT)
                        .maxQueueWait(RedisClients.PATIENT).build());
            }
            String key = "concurrency:" + UUID.randomUUID();
            List<Tier> tiers = List.of(TIER);
            CountDownLatch go = new CountDownLatch(1);
            Occupancy occupancy = new Occupancy();
            List<Future<long[]>> threads = new ArrayList<>();
            for (RateLimitStore store : stores) {
                for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                    threads.add(pool.submit(() -> {
                        go.await();
                        long admitted = 0;
                        long rejected = 0;
                        while (!occupancy.over()) {
                            if (store.tryAcquire(key, tiers, 1).allowed()) {
                                admitted++;
                                occupancy.change(1);
                                Thread.sleep(ThreadLocalRandom.current().nextInt(21));
                                occupancy.change(-1);
                                store.giveBack(key, tiers, 1, Duration.ZERO);
                            } else {
                                rejected++;
                                Thread.sleep(1);
                            }
                        }
                        return new long[] {admitted, rejected};
                    }));
                }
            }
            occupancy.start(WARM_UP, RUN);
            go.countDown();
            long admitted = 0;
            long rejected = 0;
            for (Future<long[]> thread : threads) {
                long[] counts = thread.get(1, TimeUnit.MINUTES);
                admitted += counts[0];
                rejected += counts[1];
            }
            System.out.printf("%s: max running %d, time-weighted average %.3f, %d calls admitted, %d rejections%n",
                    clients.get(0).getConfig().isClusterConfig() ? "cluster" : "single server",
                    occupancy.max(), occupancy.average(), admitted, rejected);
            assertThat(admitted).as("calls admitted").isPositive();

            // Every permit was given back: all of them are free again, and no more.
            RateLimitStore check = stores.get(0);
            for (int i = 0; i < PERMITS; i++) {
                assertThat(check.tryAcquire(key, tiers, 1).allowed()).as("permit %d after the run", i + 1).isTrue();
            }
            assertThat(check.tryAcquire(key, tiers, 1).allowed()).as("a permit beyond the limit").isFalse();
            for (int i = 0; i < PERMITS; i++) {
                check.giveBack(key, tiers, 1, Duration.ZERO);
            }
            return occupancy;
        } finally {
            pool.shutdownNow();
            clients.forEach(RedisClients::shutDown);
        }
    }

    /**
     * The calls running at once: the most seen, and their average over the measured part of the
     * run, weighted by time.
     */
    private static final class Occupancy {

        private long start;
        private volatile long end;
        private long last;
        private long area;
        private int running;
        private int max;

        /** Measures from {@code warmUp} from now on, for {@code run}, when calls stop. */
        synchronized void start(Duration warmUp, Duration run) {
            start = System.nanoTime() + warmUp.toNanos();
            last = start;
            end = start + run.toNanos();
        }

        boolean over() {
            return System.nanoTime() - end >= 0;
        }

        /** Integrates the calls running up to now, within the measured part, then changes them. */
        synchronized void change(int delta) {
            long now = Math.max(start, Math.min(System.nanoTime(), end));
            if (now > last) {
                area += running * (now - last);
                last = now;
            }
            running += delta;
            max = Math.max(max, running);
        }

        synchronized int max() {
            return max;
        }

        synchronized double average() {
            long total = area + (end > last ? running * (end - last) : 0);
            return (double) total / (end - start);
        }
    }
}
