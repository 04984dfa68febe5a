package dev.sluice.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.RedissonClientConfigs;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The overshoot of counting locally, measured in real time: several application instances (each
 * its own Redisson client and store, in this JVM) call one hot key as fast as their threads can,
 * through a {@code redis-server} of its own, and the calls admitted in each window (by the
 * clock Redis reads, this machine's) are counted against the limit and the bound
 * {@link LocalSyncRateLimitStore} states, {@code limit + (instances - 1) x share}; the exact Redis
 * store, for comparison, on the same key shape. Only windows the run covers whole are counted.
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' dev.sluice.benchmarks.LocalSyncOvershoot \
 *     --instances 3 --threads 4 --limit 600 --window 10 --seconds 32 --results local-sync.json
 * </pre>
 */
public final class LocalSyncOvershoot {

    private LocalSyncOvershoot() {
    }

    /**
     * One store's run.
     *
     * @param subject      which store the instances used
     * @param algorithm    the tier's algorithm
     * @param instances    application instances
     * @param threads      calling threads per instance
     * @param limit        the tier's limit
     * @param windowMillis the tier's window
     * @param bound        the most the store admits in a window, as it states
     * @param admitted     calls admitted in each window the run covered whole
     */
    record Row(String subject, Algorithm algorithm, int instances, int threads, long limit, long windowMillis,
               long bound, List<Long> admitted) {
    }

    /**
     * Runs the exact store, then local counting, for fixed and sliding windows, and writes the
     * results as JSON.
     *
     * @param args {@code --instances N} (default 3), {@code --threads N} per instance (default 4),
     *             {@code --limit N} (default 600), {@code --window S} seconds (default 10),
     *             {@code --seconds S} per row (default 32), {@code --results FILE}
     * @throws Exception when a run fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = RedisLoad.options(args, Map.of("--instances", "3", "--threads", "4",
                "--limit", "600", "--window", "10", "--seconds", "32", "--results", "local-sync.json"));
        int instances = Integer.parseInt(options.get("--instances"));
        int threads = Integer.parseInt(options.get("--threads"));
        long limit = Long.parseLong(options.get("--limit"));
        Duration window = Duration.ofSeconds(Long.parseLong(options.get("--window")));
        Duration run = Duration.ofSeconds(Long.parseLong(options.get("--seconds")));
        Duration interval = Duration.ofSeconds(1);
        long share = Math.max(1, (long) Math.ceil((double) limit * interval.toMillis() / window.toMillis()));
        List<Row> rows = new ArrayList<>();
        try (RedisServer server = RedisServer.start()) {
            for (Algorithm algorithm : List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW)) {
                Tier tier = Tier.of(limit, window, algorithm);
                rows.add(print(measure(server, "RedissonRateLimitStore", redis -> redis, tier, instances, threads,
                        run, limit)));
                rows.add(print(measure(server, "LocalSyncRateLimitStore, 1 s sync",
                        redis -> LocalSyncRateLimitStore.builder(redis).interval(interval).build(), tier, instances,
                        threads, run, limit + (instances - 1) * share)));
            }
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(Path.of(options.get("--results")).toFile(), rows);
    }

    private static Row measure(RedisServer server, String subject,
                               Function<RedissonRateLimitStore, RateLimitStore> store, Tier tier, int instances,
                               int threads, Duration run, long bound) throws InterruptedException {
        server.flushAll();
        long windowMillis = tier.windowMillis();
        String key = "overshoot:" + subject;
        Map<Long, LongAdder> admitted = new ConcurrentHashMap<>();
        List<RedissonClient> clients = new ArrayList<>();
        List<RateLimitStore> stores = new ArrayList<>();
        List<Thread> callers = new ArrayList<>();
        long start = System.currentTimeMillis();
        long end = start + run.toMillis();
        for (int i = 0; i < instances; i++) {
            RedissonClient client = Redisson.create(RedissonClientConfigs.singleServer(server.address()));
            clients.add(client);
            RateLimitStore instance = store.apply(RedissonRateLimitStore.builder(client)
                    .timeout(Duration.ofSeconds(5)).build());
            stores.add(instance);
            for (int t = 0; t < threads; t++) {
                Thread caller = new Thread(() -> {
                    for (long now = System.currentTimeMillis(); now < end; now = System.currentTimeMillis()) {
                        if (instance.tryAcquire(key, List.of(tier), 1).allowed()) {
                            // When the call was decided: the clock Redis reads is this machine's.
                            long decided = System.currentTimeMillis();
                            admitted.computeIfAbsent(decided - decided % windowMillis, w -> new LongAdder()).increment();
                        }
                    }
                });
                caller.start();
                callers.add(caller);
            }
        }
        for (Thread caller : callers) {
            caller.join();
        }
        for (RateLimitStore instance : stores) {
            if (instance instanceof LocalSyncRateLimitStore local) {
                local.close();
            }
        }
        clients.forEach(RedissonClient::shutdown);
        List<Long> whole = admitted.keySet().stream().sorted()
                .filter(windowStart -> windowStart >= start && windowStart + windowMillis <= end)
                .map(windowStart -> admitted.get(windowStart).sum()).toList();
        return new Row(subject, tier.algorithm(), instances, threads, tier.limit(), windowMillis, bound, whole);
    }

    private static Row print(Row row) {
        System.out.printf(Locale.ROOT, "%-36s %-14s %d instances x %d threads: admitted per window %s, limit %d,"
                        + " bound %d%n", row.subject(), row.algorithm(), row.instances(), row.threads(), row.admitted(),
                row.limit(), row.bound());
        return row;
    }
}
