package dev.sluice.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.redisson.RedissonClientConfigs;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * What callers that wait for permits ({@code onLimit = WAIT}) cost the store, in real time: on a
 * key whose limit is spent, blocked threads and asynchronous callers ask for one permit each at
 * once, and every store call is counted. Stores that reserve token-bucket permits answer each
 * caller once; for the others (window algorithms, or a store that does not reserve) callers line
 * up in the limiter. Asynchronous callers ask one after another from one thread, so the order
 * they are served in can be checked against the order they asked in.
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' dev.sluice.benchmarks.WaitingCallers \
 *     --threads 60 --async 60 --rate 50 --results waiting.json
 * </pre>
 */
public final class WaitingCallers {

    private WaitingCallers() {
    }

    /**
     * One store's run.
     *
     * @param subject       the store and how it serves waiting callers
     * @param algorithm     the tier's algorithm
     * @param threads       blocked callers, one thread each
     * @param async         asynchronous callers
     * @param ratePerSecond the tier's limit a second
     * @param admitted      callers served
     * @param storeCalls    calls the store was asked while they waited
     * @param outOfOrder    asynchronous callers served before one that asked earlier
     * @param seconds       from the first ask to the last caller served
     */
    record Row(String subject, Algorithm algorithm, int threads, int async, long ratePerSecond, long admitted,
               long storeCalls, long outOfOrder, double seconds) {

        double callsPerPermit() {
            return admitted == 0 ? 0 : storeCalls / (double) admitted;
        }
    }

    /**
     * Runs each store and writes the results as JSON.
     *
     * @param args {@code --threads N} blocked callers (default 60), {@code --async N} asynchronous
     *             callers (default 60), {@code --rate N} permits a second (default 50),
     *             {@code --results FILE}
     * @throws Exception when a run fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = RedisLoad.options(args, Map.of("--threads", "60", "--async", "60",
                "--rate", "50", "--results", "waiting.json"));
        int threads = Integer.parseInt(options.get("--threads"));
        int async = Integer.parseInt(options.get("--async"));
        long rate = Long.parseLong(options.get("--rate"));
        List<Row> rows = new ArrayList<>();
        rows.add(print(measure("in memory, reserved", InMemoryRateLimitStore.builder().build(), Algorithm.TOKEN_BUCKET,
                threads, async, rate)));
        try (RedisServer server = RedisServer.start()) {
            RedissonClient client = Redisson.create(RedissonClientConfigs.singleServer(server.address()));
            try {
                RedissonRateLimitStore redis = RedissonRateLimitStore.builder(client).build();
                rows.add(print(measure("Redis, reserved", redis, Algorithm.TOKEN_BUCKET, threads, async, rate)));
                rows.add(print(measure("Redis, in line (reservations off)", new Unreserving(redis),
                        Algorithm.TOKEN_BUCKET, threads, async, rate)));
                rows.add(print(measure("Redis, in line", redis, Algorithm.FIXED_WINDOW, threads, async, rate)));
                rows.add(print(measure("Redis, in line", redis, Algorithm.SLIDING_WINDOW, threads, async, rate)));
            } finally {
                client.shutdown();
            }
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(Path.of(options.get("--results")).toFile(), rows);
    }

    private static Row measure(String subject, RateLimitStore store, Algorithm algorithm, int threads, int async,
                               long rate) throws Exception {
        Counting counting = new Counting(store);
        RateLimiter limiter = RateLimiter.builder().name("waiting-" + algorithm.name().toLowerCase(Locale.ROOT))
                .store(counting).tier(Tier.of(rate, Duration.ofSeconds(1), algorithm))
                .onLimit(OnLimit.WAIT).maxWait(Duration.ofMinutes(1)).build();
        String key = subject + ":" + System.nanoTime();
        // Spend the limit, so that every caller below waits.
        while (limiter.tryAcquire(key).allowed()) {
            Thread.onSpinWait();
        }
        counting.calls.reset();
        ExecutorService blocked = Executors.newFixedThreadPool(Math.max(1, threads));
        ConcurrentLinkedQueue<Integer> servedAsync = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        long start = System.nanoTime();
        try {
            for (int i = 0; i < Math.max(threads, async); i++) {
                if (i < threads) {
                    calls.add(CompletableFuture.supplyAsync(() -> limiter.acquire(key), blocked));
                }
                if (i < async) {
                    int caller = i;
                    calls.add(limiter.acquireAsync(key).toCompletableFuture()
                            .whenComplete((decision, failure) -> servedAsync.add(caller)));
                }
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
        } finally {
            blocked.shutdownNow();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long admitted = calls.stream().filter(call -> call.join().allowed()).count();
        long outOfOrder = 0;
        int latest = -1;
        for (int caller : servedAsync) {
            if (caller < latest) {
                outOfOrder++;
            }
            latest = Math.max(latest, caller);
        }
        return new Row(subject, algorithm, threads, async, rate, admitted, counting.calls.sum(), outOfOrder, seconds);
    }

    private static Row print(Row row) {
        System.out.printf(Locale.ROOT, "%-36s %-14s %d threads + %d async at %d/s: %d served, %d store calls"
                        + " (%.2f a permit), %d async served out of order, %.2f s%n", row.subject(), row.algorithm(),
                row.threads(), row.async(), row.ratePerSecond(), row.admitted(), row.storeCalls(),
                row.callsPerPermit(), row.outOfOrder(), row.seconds());
        return row;
    }

    /** A store counting every call it is asked, reservations included. */
    private static final class Counting extends ForwardingRateLimitStore {

        final LongAdder calls = new LongAdder();

        Counting(RateLimitStore store) {
            super(store);
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            calls.increment();
            return super.tryAcquire(key, tiers, cost);
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            calls.increment();
            return super.tryAcquireAsync(key, tiers, cost);
        }

        @Override
        public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
            calls.increment();
            return super.reserve(key, tiers, cost, maxWait);
        }

        @Override
        public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
            calls.increment();
            return super.reserveAsync(key, tiers, cost, maxWait);
        }
    }

    /** A store that decides every call now, as one that cannot reserve: how callers waited before reservations. */
    private static final class Unreserving extends ForwardingRateLimitStore {

        Unreserving(RateLimitStore store) {
            super(store);
        }

        @Override
        public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
            return Reservation.now(tryAcquire(key, tiers, cost));
        }

        @Override
        public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
            return tryAcquireAsync(key, tiers, cost).thenApply(Reservation::now);
        }

        @Override
        public boolean reserves(Tier tier) {
            return false;
        }
    }
}
