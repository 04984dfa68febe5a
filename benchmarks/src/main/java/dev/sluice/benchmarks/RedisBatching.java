package dev.sluice.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.sluice.StoreOverloadedException;
import dev.sluice.benchmarks.RedisLoad.ClientUsage;
import dev.sluice.benchmarks.RedisLoad.Row;
import dev.sluice.benchmarks.RedisLoad.Scenario;
import dev.sluice.benchmarks.RedisLoad.Traffic;
import dev.sluice.benchmarks.RedisSubject.Decider;
import dev.sluice.benchmarks.RedisSubject.Limits;
import dev.sluice.redisson.testing.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RedissonClient;

/**
 * Sluice's Redis store as built by default, which sends the decisions waiting for it together,
 * many per script call, beside the same store sending one script call per decision
 * ({@code batchSize(1)}) and Redisson's {@code RRateLimiter} ({@link RedisSubject#batching}), all
 * three in one run on a {@code redis-server} of its own:
 *
 * <ul>
 *   <li><b>Blocking threads</b> calling one hot key as fast as they can, at each of
 *       {@code --threads}, measured as {@link RedisLoad} measures its rows (decisions a second,
 *       latency, the client's and the server's CPU time per decision), with the bytes the server
 *       read and wrote per decision.</li>
 *   <li><b>Asynchronous decisions kept in flight</b>: one thread keeps {@code --in-flight}
 *       asynchronous decisions on one hot key outstanding, firing another as each is answered.</li>
 *   <li><b>Bursts</b>: each of {@code --bursts} asynchronous decisions fired at once from one
 *       thread, then awaited, on one hot key and with every decision a key of its own, each on a
 *       new store (new limiters) warmed up first: the time until the last is answered, how each
 *       came out, and the script calls the server ran for them.</li>
 *   <li><b>A limited burst</b>: {@value #LIMITED_BURST} asynchronous decisions at once on one hot
 *       key whose limit is {@link #LIMITED}: as many must be admitted as the limit.</li>
 * </ul>
 *
 * <p>But for the limited burst, every limit is 1,000,000,000 a second, never reached, so that
 * every call does the whole work of an admitted decision. Every measurement starts on an empty
 * server.
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' dev.sluice.benchmarks.RedisBatching \
 *     --threads 1,16,64,256 --in-flight 1000 --bursts 1000,10000,100000 --warm-up 1 --measure 2 \
 *     --results redis-batching.json
 * </pre>
 */
public final class RedisBatching {

    /** The limit of the limited burst: 500 an hour, a window long enough that no burst straddles two. */
    private static final Limits LIMITED = new Limits(500, Duration.ofHours(1));
    /** Decisions in the limited burst. */
    static final int LIMITED_BURST = 10_000;
    /** The key of the hot-key measurements. */
    private static final String HOT_KEY = "bench:hot";
    /**
     * Decisions fired at once, and awaited, in each round that warms a new store up before a
     * burst, one for each of as many keys of their own.
     */
    static final int WARM_UP_ROUND = 100;
    /** Rounds that warm a new store up before a burst. */
    static final int WARM_UP_ROUNDS = 10;
    /** The longest the run waits for a burst to be answered, or the server to go quiet, before it stops. */
    private static final Duration BOUND = Duration.ofMinutes(2);
    /** How long the server must run no script to be taken for done. */
    static final long QUIET_MILLIS = 50;

    private RedisBatching() {
    }

    /**
     * Runs every part and writes the results as JSON.
     *
     * @param args {@code --threads N,N,...} blocking threads (default 1,16,64,256);
     *             {@code --in-flight N} asynchronous decisions kept in flight (default 1000);
     *             {@code --bursts N,N,...} decisions per burst (default 1000,10000,100000);
     *             {@code --warm-up S} and {@code --measure S}, seconds per measurement of threads
     *             and of decisions in flight (default 1 and 2); {@code --results FILE} (default
     *             {@code redis-batching.json})
     * @throws Exception when a run fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = RedisLoad.options(args, Map.of("--threads", "1,16,64,256",
                "--in-flight", "1000", "--bursts", "1000,10000,100000", "--warm-up", "1", "--measure", "2",
                "--results", "redis-batching.json"));
        Duration warmUp = RedisLoad.seconds(options.get("--warm-up"));
        Duration measure = RedisLoad.seconds(options.get("--measure"));
        int inFlight = Integer.parseInt(options.get("--in-flight"));
        List<RedisSubject> subjects = RedisSubject.batching(Limits.PERMITTED);
        List<RedisSubject> limited = RedisSubject.batching(LIMITED);
        List<Row> threads = new ArrayList<>();
        List<InFlight> inFlights = new ArrayList<>();
        List<Burst> bursts = new ArrayList<>();
        List<Burst> limitedBursts = new ArrayList<>();
        String redisVersion;
        try (RedisServer server = RedisServer.start()) {
            redisVersion = RedisLoad.infoField(server.cli("INFO", "server"), "redis_version");
            Map<RedisSubject.Client, RedissonClient> clients = RedisSubject.Client.connectAll(server.address());
            try {
                // Compiles Redisson, netty and each subject, blocking and not, before anything is measured.
                for (RedisSubject subject : subjects) {
                    server.flushAll();
                    RedisLoad.measure(server, new Scenario(1, Traffic.PERMITTED, 16), subject,
                            clients.get(subject.client()), warmUp.multipliedBy(2), Duration.ofMillis(1));
                    burst(server, subject, clients.get(subject.client()), true, 10_000);
                }
                for (int count : integers(options.get("--threads"))) {
                    for (RedisSubject subject : subjects) {
                        server.flushAll();
                        threads.add(RedisLoad.print(RedisLoad.measure(server, new Scenario(1, Traffic.PERMITTED,
                                count), subject, clients.get(subject.client()), warmUp, measure)));
                    }
                }
                for (RedisSubject subject : subjects) {
                    inFlights.add(print(inFlight(server, subject, clients.get(subject.client()), inFlight, warmUp,
                            measure)));
                }
                for (boolean hotKey : new boolean[] {true, false}) {
                    for (int decisions : integers(options.get("--bursts"))) {
                        for (RedisSubject subject : subjects) {
                            bursts.add(print(burst(server, subject, clients.get(subject.client()), hotKey,
                                    decisions)));
                        }
                    }
                }
                for (RedisSubject subject : limited) {
                    limitedBursts.add(print(burst(server, subject, clients.get(subject.client()), true,
                            LIMITED_BURST)));
                }
            } finally {
                clients.values().forEach(RedissonClient::shutdown);
            }
        }
        Path results = Path.of(options.get("--results"));
        Files.createDirectories(results.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(results.toFile(),
                new Results(redisVersion, warmUp.toMillis() / 1e3, measure.toMillis() / 1e3, inFlight,
                        LIMITED.limit(), LIMITED.window().toSeconds(), threads, inFlights, bursts, limitedBursts));
    }

    /**
     * Everything one run measured.
     *
     * @param redisVersion         the server's version
     * @param warmUpSeconds        the warm-up of each measurement of threads and of decisions in flight
     * @param measureSeconds       the length of each of those measurements
     * @param inFlight             the asynchronous decisions kept in flight
     * @param limitedLimit         the limit of the limited burst
     * @param limitedWindowSeconds its window
     * @param threads              blocking threads on one hot key, per thread count and subject
     * @param inFlights            decisions kept in flight, per subject
     * @param bursts               bursts, on one hot key and then on a key per decision, per size and subject
     * @param limitedBursts        the limited burst, per subject
     */
    record Results(String redisVersion, double warmUpSeconds, double measureSeconds, int inFlight,
                   long limitedLimit, long limitedWindowSeconds, List<Row> threads, List<InFlight> inFlights,
                   List<Burst> bursts, List<Burst> limitedBursts) {
    }

    /**
     * Asynchronous decisions kept in flight on one hot key, one subject. CPU times are in
     * microseconds.
     *
     * @param subject                who decided
     * @param client                 the Redisson client it ran on
     * @param inFlight               decisions kept in flight
     * @param decisionsPerSecond     decisions answered a second
     * @param failed                 calls that got no decision, in the measurement
     * @param overloaded             calls the store refused as overloaded, in the measurement
     * @param clientCpuMicros        the client JVM's CPU time per decision
     * @param serverCpuMicros        the server's CPU time per decision
     * @param netBytes               bytes the server read and wrote per decision
     * @param scriptCallsPerDecision script calls per decision
     */
    record InFlight(String subject, String client, int inFlight, double decisionsPerSecond, long failed,
                    long overloaded, double clientCpuMicros, double serverCpuMicros, double netBytes,
                    double scriptCallsPerDecision) {
    }

    /**
     * One burst of one subject.
     *
     * @param subject     who decided
     * @param client      the Redisson client it ran on
     * @param keys        the keys the burst's decisions were for: 1, or one per decision
     * @param decisions   decisions fired at once
     * @param seconds     from the first fired to the last answered, failures and refusals included
     * @param admitted    calls admitted
     * @param rejected    calls rejected by the limit
     * @param failed      calls that got no decision: for Sluice's stores
     *                    {@code StoreUnavailableException}, for the others any exception
     * @param overloaded  calls the store refused with {@code StoreOverloadedException}
     * @param failures    the simple names of the exceptions of the failed calls
     * @param scriptCalls script calls the server ran from just before the burst until it was quiet
     *                    after it ({@code EVAL} and {@code EVALSHA} in {@code INFO commandstats}),
     *                    taking back late decisions included
     */
    record Burst(String subject, String client, int keys, int decisions, double seconds, long admitted,
                 long rejected, long failed, long overloaded, List<String> failures, long scriptCalls) {
    }

    /**
     * One thread keeps {@code inFlight} asynchronous decisions on one hot key outstanding, firing
     * another as each is answered; the measurement counts the answers that come within it.
     */
    private static InFlight inFlight(RedisServer server, RedisSubject subject, RedissonClient client, int inFlight,
                                     Duration warmUp, Duration measure) throws InterruptedException {
        server.flushAll();
        Decider decider = subject.opener().open(client, new String[] {HOT_KEY});
        long from = System.nanoTime() + warmUp.toNanos();
        long to = from + measure.toNanos();
        Semaphore free = new Semaphore(inFlight);
        Tally tally = new Tally();
        Thread firing = new Thread(() -> {
            try {
                for (long now = System.nanoTime(); now < to; now = System.nanoTime()) {
                    if (!free.tryAcquire(to - now, TimeUnit.NANOSECONDS)) {
                        return;
                    }
                    fire(decider, 0).whenComplete((allowed, failure) -> {
                        long answered = System.nanoTime();
                        if (answered >= from && answered < to) {
                            tally.count(allowed, failure);
                        }
                        free.release();
                    });
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        firing.start();
        RedisLoad.parkUntil(from);
        ClientUsage clientBefore = ClientUsage.sample();
        ServerStats serverBefore = ServerStats.sample(server.port());
        RedisLoad.parkUntil(to);
        ClientUsage.Spent clientSpent = ClientUsage.sample().since(clientBefore);
        ServerStats serverSpent = ServerStats.sample(server.port()).since(serverBefore);
        firing.join();
        if (!free.tryAcquire(inFlight, BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(subject.name() + " left decisions unanswered for " + BOUND);
        }
        long answered = tally.admitted.sum() + tally.rejected.sum();
        double decisions = Math.max(1, answered);
        return new InFlight(subject.name(), subject.client().label(), inFlight,
                answered / (measure.toNanos() / 1e9), tally.failed.sum(), tally.overloaded.sum(),
                clientSpent.cpuNanos() / 1e3 / decisions, serverSpent.cpuSeconds() * 1e6 / decisions,
                serverSpent.netBytes() / decisions, serverSpent.scriptCalls() / decisions);
    }

    /**
     * A burst on an empty server: a new store (or new limiters) for the burst's keys and keys of
     * its own to warm up on, warmed up, then {@code decisions} asynchronous decisions fired at once
     * and awaited.
     */
    private static Burst burst(RedisServer server, RedisSubject subject, RedissonClient client, boolean hotKey,
                               int decisions) throws InterruptedException {
        server.flushAll();
        int burstKeys = hotKey ? 1 : decisions;
        String[] keys = new String[burstKeys + WARM_UP_ROUND];
        for (int i = 0; i < burstKeys; i++) {
            keys[i] = hotKey ? HOT_KEY : "bench:user-" + i;
        }
        for (int i = 0; i < WARM_UP_ROUND; i++) {
            keys[burstKeys + i] = "bench:warm-up-" + i;
        }
        Decider decider = subject.opener().open(client, keys);
        for (int round = 0; round < WARM_UP_ROUNDS; round++) {
            CompletableFuture<?>[] answers = new CompletableFuture<?>[WARM_UP_ROUND];
            for (int i = 0; i < WARM_UP_ROUND; i++) {
                answers[i] = fire(decider, burstKeys + i).toCompletableFuture();
            }
            CompletableFuture.allOf(answers).handle((done, failure) -> null).join();
        }
        ServerStats before = quiet(server);
        Tally tally = new Tally();
        CountDownLatch answered = new CountDownLatch(decisions);
        AtomicLong lastAnswered = new AtomicLong();
        long start = System.nanoTime();
        for (int i = 0; i < decisions; i++) {
            fire(decider, hotKey ? 0 : i).whenComplete((allowed, failure) -> {
                lastAnswered.accumulateAndGet(System.nanoTime(), Math::max);
                tally.count(allowed, failure);
                answered.countDown();
            });
        }
        if (!answered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(subject.name() + " left " + answered.getCount() + " of a burst of "
                    + decisions + " unanswered for " + BOUND);
        }
        long scriptCalls = quiet(server).scriptCalls() - before.scriptCalls();
        return new Burst(subject.name(), subject.client().label(), burstKeys, decisions,
                (lastAnswered.get() - start) / 1e9, tally.admitted.sum(), tally.rejected.sum(), tally.failed.sum(),
                tally.overloaded.sum(), tally.failures.stream().sorted().toList(), scriptCalls);
    }

    /** Asks for a decision; a call that throws instead of failing its stage fails it all the same. */
    private static CompletionStage<Boolean> fire(Decider decider, int key) {
        try {
            return decider.decideAsync(key);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A sample of the server once it has run no script for {@value #QUIET_MILLIS} ms, so that
     * every call sent before, late ones included, is counted in it.
     */
    private static ServerStats quiet(RedisServer server) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        ServerStats last = ServerStats.sample(server.port());
        while (true) {
            Thread.sleep(QUIET_MILLIS);
            ServerStats now = ServerStats.sample(server.port());
            if (now.scriptCalls() == last.scriptCalls()) {
                return now;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the server still ran scripts " + BOUND + " after a burst");
            }
            last = now;
        }
    }

    /** How asynchronous calls came out; safe to count from any thread. */
    private static final class Tally {

        final LongAdder admitted = new LongAdder();
        final LongAdder rejected = new LongAdder();
        final LongAdder failed = new LongAdder();
        final LongAdder overloaded = new LongAdder();
        final Set<String> failures = ConcurrentHashMap.newKeySet();

        void count(@Nullable Boolean allowed, @Nullable Throwable failure) {
            if (failure == null) {
                (Boolean.TRUE.equals(allowed) ? admitted : rejected).increment();
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (cause instanceof StoreOverloadedException) {
                overloaded.increment();
            } else {
                failed.increment();
                failures.add(cause.getClass().getSimpleName());
            }
        }
    }

    private static List<Integer> integers(String list) {
        return Arrays.stream(list.split(",")).map(String::strip).map(Integer::valueOf).toList();
    }

    private static InFlight print(InFlight row) {
        System.out.printf(Locale.ROOT, "%5d in flight, one hot key | %-42s %-8s | %8.0f/s | %d failed, %d refused%n",
                row.inFlight(), row.subject(), row.client(), row.decisionsPerSecond(), row.failed(),
                row.overloaded());
        return row;
    }

    private static Burst print(Burst burst) {
        System.out.printf(Locale.ROOT, "burst of %,7d on %,7d key(s) | %-42s %-8s | %9.1f ms | %,d admitted,"
                        + " %,d rejected, %,d failed %s, %,d refused | %,d script calls%n", burst.decisions(),
                burst.keys(), burst.subject(), burst.client(), burst.seconds() * 1e3, burst.admitted(),
                burst.rejected(), burst.failed(), burst.failures(), burst.overloaded(), burst.scriptCalls());
        return burst;
    }
}
