package dev.sluice.benchmarks;

import dev.sluice.RateLimitStore;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.redisson.api.RedissonClient;

/**
 * Decisions per second and latency percentiles of {@link RedissonRateLimitStore} on one hot key,
 * per algorithm and number of calling threads, beside {@code redis-benchmark} running the same
 * script with the same arguments on the same freshly started {@code redis-server}: the gap is
 * what the Java client (Redisson, the store) costs on top of the server's own work.
 *
 * <pre>
 * mvn -pl benchmarks -am install -DskipTests
 * mvn -pl benchmarks exec:java -Dexec.args="--seconds 5"
 * </pre>
 */
public final class RedisLoad {

    /** Calls during a row that the store did not decide. */
    private static final LongAdder FAILURES = new LongAdder();

    private RedisLoad() {
    }

    /**
     * Runs the comparison and prints one row per algorithm and thread count.
     *
     * @param args {@code --seconds N} (default 5) measured per row, after a 2 s warm-up
     * @throws Exception when a run fails
     */
    public static void main(String[] args) throws Exception {
        int seconds = args.length == 2 && args[0].equals("--seconds") ? Integer.parseInt(args[1]) : 5;
        String script = resource("/dev/sluice/redisson/decide.lua");
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                .digest(script.getBytes(StandardCharsets.UTF_8)));
        int[] threadCounts = {1, 16, 64};
        System.out.printf(Locale.ROOT, "%-15s %7s | %12s %8s %8s | %12s %8s %8s%n", "algorithm", "threads",
                "sluice ops/s", "p50 ms", "p99 ms", "r-b ops/s", "p50 ms", "p99 ms");
        try (RedisServer server = RedisServer.start()) {
            server.cli("SCRIPT", "LOAD", script);
            RedissonClient client = RedisClients.connect(server);
            try {
                RateLimitStore store = RedissonRateLimitStore.builder(client).build();
                for (Algorithm algorithm : Algorithm.values()) {
                    Tier tier = Tier.of(1_000, Duration.ofSeconds(1), algorithm);
                    for (int threads : threadCounts) {
                        server.flushAll();
                        Result sluice = measure(store, "bench-" + algorithm, tier, threads, seconds);
                        server.flushAll();
                        Result benchmark = redisBenchmark(server, sha, tier, threads, Math.max(10_000L,
                                (long) sluice.opsPerSecond * seconds));
                        System.out.printf(Locale.ROOT, "%-15s %7d | %12.0f %8.3f %8.3f | %12.0f %8.3f %8.3f%n",
                                algorithm, threads, sluice.opsPerSecond, sluice.p50, sluice.p99,
                                benchmark.opsPerSecond, benchmark.p50, benchmark.p99);
                        if (FAILURES.sum() > 0) {
                            System.out.printf(Locale.ROOT, "  %d calls failed (the store's timeout, or its breaker"
                                    + " open) and are not counted above%n", FAILURES.sumThenReset());
                        }
                    }
                }
            } finally {
                client.shutdown();
            }
        }
    }

    /** Throughput and latency percentiles in milliseconds. */
    private record Result(double opsPerSecond, double p50, double p99) {
    }

    private static Result measure(RateLimitStore store, String key, Tier tier, int threads, int seconds)
            throws Exception {
        run(store, key, tier, threads, Duration.ofSeconds(2));
        long start = System.nanoTime();
        long[] latencies = run(store, key, tier, threads, Duration.ofSeconds(seconds));
        double elapsed = (System.nanoTime() - start) / 1e9;
        Arrays.sort(latencies);
        return new Result(latencies.length / elapsed, percentile(latencies, 0.50), percentile(latencies, 0.99));
    }

    private static long[] run(RateLimitStore store, String key, Tier tier, int threads, Duration duration)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            long end = System.nanoTime() + duration.toNanos();
            List<Future<long[]>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    go.await();
                    long[] samples = new long[1 << 16];
                    int count = 0;
                    List<Tier> tiers = List.of(tier);
                    for (long now = System.nanoTime(); now < end; ) {
                        try {
                            store.tryAcquire(key, tiers, 1);
                        } catch (StoreUnavailableException e) {
                            // Not a decision: too slow, or refused at once by an open circuit breaker.
                            FAILURES.increment();
                            now = System.nanoTime();
                            continue;
                        }
                        long done = System.nanoTime();
                        if (count == samples.length) {
                            samples = Arrays.copyOf(samples, count * 2);
                        }
                        samples[count++] = done - now;
                        now = done;
                    }
                    return Arrays.copyOf(samples, count);
                }));
            }
            go.countDown();
            List<long[]> all = new ArrayList<>();
            for (Future<long[]> result : results) {
                all.add(result.get(duration.toSeconds() + 60, TimeUnit.SECONDS));
            }
            return all.stream().flatMapToLong(Arrays::stream).toArray();
        } finally {
            pool.shutdownNow();
        }
    }

    private static double percentile(long[] sortedNanos, double quantile) {
        return sortedNanos[(int) Math.min(sortedNanos.length - 1, Math.floor(quantile * sortedNanos.length))] / 1e6;
    }

    /** The same EVALSHA, keys and arguments the store sends, from redis-benchmark's C clients. */
    private static Result redisBenchmark(RedisServer server, String sha, Tier tier, int clients, long requests)
            throws IOException, InterruptedException {
        String code = switch (tier.algorithm()) {
            case FIXED_WINDOW -> "fw";
            case SLIDING_WINDOW -> "sw";
            case SLIDING_LOG -> "sl";
            case TOKEN_BUCKET -> "tb";
        };
        String base = "sluice:{rb-" + tier.algorithm() + "}:";
        List<String> command = List.of("redis-benchmark", "-p", String.valueOf(server.port()), "-c",
                String.valueOf(clients), "-n", String.valueOf(requests), "-r", "1000000000", "--csv",
                "EVALSHA", sha, "2", base + "meta", base + code + tier.windowMillis(),
                "", "1", "call-__rand_int__", "", code, String.valueOf(tier.limit()), String.valueOf(tier.windowMillis()),
                "0", "0");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        String[] lines = output.strip().split("\n");
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms",...
        String[] row = lines[lines.length - 1].replace("\"", "").split(",");
        return new Result(Double.parseDouble(row[1]), Double.parseDouble(row[4]), Double.parseDouble(row[6]));
    }

    private static String resource(String name) {
        try (InputStream in = RedisLoad.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
