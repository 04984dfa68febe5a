package dev.sluice.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.google.common.util.concurrent.RateLimiter;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.benchmarks.RedisSubject.Limits;
import dev.sluice.redisson.testing.RedisServer;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.redisson.api.RedissonClient;

/**
 * Memory per key. In the JVM: the heap a limiter holds per key once every key has had one call,
 * measured as the heap in use after full collections, before and after, divided by the keys;
 * the caller's key strings exist before and are not counted, strings a limiter makes of its own
 * are. In Redis: {@code MEMORY USAGE} of every key one decision for one key leaves, summed.
 *
 * <pre>
 * java -Xmx3g -cp 'benchmarks/target/classes:benchmarks/target/lib/*' dev.sluice.benchmarks.MemoryFootprint \
 *     --keys 1000000 --results memory.json
 * </pre>
 */
public final class MemoryFootprint {

    /** A limit no key reaches here, in a window longer than the measurement, so that no state expires. */
    private static final Limits LIMITS = new Limits(1_000, Duration.ofHours(1));

    private MemoryFootprint() {
    }

    /**
     * Measures every subject and writes the results as JSON.
     *
     * @param args {@code --keys N} (default 1,000,000) and {@code --results FILE} (default
     *             {@code memory.json})
     * @throws IOException when the results cannot be written
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> options = RedisLoad.options(args,
                Map.of("--keys", "1000000", "--results", "memory.json"));
        String[] keys = new String[Integer.parseInt(options.get("--keys"))];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "user-" + i;
        }
        List<Row> rows = new ArrayList<>();
        for (Algorithm algorithm : EnumSet.complementOf(EnumSet.of(Algorithm.CONCURRENCY))) {
            rows.add(print(inJvm("Sluice " + algorithm, keys, () -> sluice(keys, LIMITS.tier(algorithm)))));
        }
        RateLimiterConfig resilience4jConfig = RateLimiterConfig.custom().limitForPeriod((int) LIMITS.limit())
                .limitRefreshPeriod(LIMITS.window()).timeoutDuration(Duration.ZERO).build();
        rows.add(print(inJvm("Resilience4j AtomicRateLimiter", keys, () -> perKey(keys,
                key -> new AtomicRateLimiter(key, resilience4jConfig), AtomicRateLimiter::acquirePermission))));
        Bandwidth bandwidth = Bandwidth.builder().capacity(LIMITS.limit())
                .refillGreedy(LIMITS.limit(), LIMITS.window()).build();
        rows.add(print(inJvm("Bucket4j local bucket", keys, () -> perKey(keys,
                key -> Bucket.builder().addLimit(bandwidth).build(), bucket -> bucket.tryConsume(1)))));
        double permitsPerSecond = LIMITS.limit() / (double) LIMITS.window().toSeconds();
        rows.add(print(inJvm("Guava RateLimiter", keys, () -> perKey(keys,
                key -> RateLimiter.create(permitsPerSecond), RateLimiter::tryAcquire))));
        rows.addAll(inRedis());

        Path results = Path.of(options.get("--results"));
        Files.createDirectories(results.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(results.toFile(), rows);
    }

    /**
     * One subject's memory per key.
     *
     * @param where       {@code JVM} or {@code Redis}
     * @param subject     who keeps the keys
     * @param bytesPerKey bytes per key
     * @param keysKept    in the JVM, the keys the subject held at the end (all of them, unless
     *                    it dropped some); in Redis, the Redis keys one limiter key takes
     */
    record Row(String where, String subject, double bytesPerKey, long keysKept) {
    }

    /** What a filled structure holds, measured on the heap. */
    private static Row inJvm(String subject, String[] keys, Supplier<Filled> fill) {
        long before = heapInUse();
        Filled filled = fill.get();
        long after = heapInUse();
        Reference.reachabilityFence(filled);
        return new Row("JVM", subject, (after - before) / (double) keys.length, filled.keysKept());
    }

    /** A structure holding every key, and how many keys it says it holds. */
    private record Filled(Object structure, long keysKept) {
    }

    /** A Sluice limiter on an in-memory store with room for two million keys, after one call per key. */
    private static Filled sluice(String[] keys, Tier tier) {
        InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().maximumKeys(2_000_000).build();
        dev.sluice.RateLimiter limiter = dev.sluice.RateLimiter.builder()
                .name("bench").store(store).tier(tier).build();
        for (String key : keys) {
            limiter.tryAcquire(key);
        }
        return new Filled(limiter, store.estimatedKeyCount());
    }

    /** Another library's limiters, one per key in a {@link ConcurrentHashMap}, after one call each. */
    private static <L> Filled perKey(String[] keys, Function<String, L> newLimiter, Consumer<L> call) {
        ConcurrentHashMap<String, L> limiters = new ConcurrentHashMap<>();
        for (String key : keys) {
            call.accept(limiters.computeIfAbsent(key, newLimiter));
        }
        return new Filled(limiters, limiters.size());
    }

    /** The heap in use after full collections, in bytes. */
    private static long heapInUse() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Each subject's Redis keys after one decision for one key, on an empty server. */
    private static List<Row> inRedis() {
        List<Row> rows = new ArrayList<>();
        try (RedisServer server = RedisServer.start()) {
            RedissonClient tuned = RedisSubject.Client.TUNED.connect(server.address());
            RedissonClient untuned = RedisSubject.Client.DEFAULT.connect(server.address());
            try {
                for (RedisSubject subject : RedisSubject.all(LIMITS)) {
                    if (subject.sluice() && subject.client() == RedisSubject.Client.DEFAULT) {
                        continue; // the same keys as on the tuned client
                    }
                    server.flushAll();
                    RedissonClient client = subject.client() == RedisSubject.Client.TUNED ? tuned : untuned;
                    subject.opener().open(client, new String[] {"bench:user-0"}).decide(0);
                    String scan = server.cli("--scan");
                    List<String> written = scan.isEmpty() ? List.of() : List.of(scan.split("\n"));
                    long bytes = 0;
                    for (String key : written) {
                        bytes += Long.parseLong(server.cli("MEMORY", "USAGE", key, "SAMPLES", "0"));
                    }
                    rows.add(print(new Row("Redis", subject.name(), bytes, written.size())));
                }
            } finally {
                tuned.shutdown();
                untuned.shutdown();
            }
        }
        return rows;
    }

    private static Row print(Row row) {
        System.out.printf(Locale.ROOT, "%-5s %-45s %8.1f bytes per key (%d keys)%n", row.where(), row.subject(),
                row.bytesPerKey(), row.keysKept());
        return row;
    }
}
