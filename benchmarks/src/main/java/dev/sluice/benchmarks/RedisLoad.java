package dev.sluice.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.benchmarks.RedisSubject.Decider;
import dev.sluice.benchmarks.RedisSubject.Limits;
import dev.sluice.redisson.RedissonRateLimitStore;
import dev.sluice.redisson.testing.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RedissonClient;

/**
 * Decisions through Redis under load: Sluice's stores beside Redisson's {@code RRateLimiter} and
 * Bucket4j's own Redisson proxy manager, and {@code redis-cli --pipe} sending Sluice's exact
 * script call, pipelined, the ceiling the server itself sets. It starts its own
 * {@code redis-server} and, per row, measures decisions a second, latency percentiles, the
 * client's CPU time and garbage per decision (the whole JVM: callers, Redisson, netty), and the
 * server's CPU time per decision and per script call.
 *
 * <p>Rows: one hot key with calls admitted, at each of {@code --hot-key-threads}; then 10,000
 * keys with calls admitted, and one hot key with calls rejected, at {@code --threads}. Every row
 * starts on an empty server and warms up before it is measured.
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' dev.sluice.benchmarks.RedisLoad \
 *     --warm-up 2 --measure 3 --hot-key-threads 1,16,64 --threads 16 --results redis-load.json
 * </pre>
 */
public final class RedisLoad {

    /** The keys of the rows with many keys. */
    static final int MANY_KEYS = 10_000;

    /** The client of the ceiling's rows. */
    static final String CEILING_CLIENT = "redis-cli --pipe";


    private RedisLoad() {
    }

    /**
     * Runs every row and writes the results as JSON.
     *
     * @param args {@code --warm-up S} and {@code --measure S}, seconds per row (default 2 and 3);
     *             {@code --hot-key-threads N,N,...} (default 1,16,64); {@code --threads N} for the
     *             other rows (default 16); {@code --results FILE} (default {@code redis-load.json})
     * @throws Exception when a run fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args, Map.of("--warm-up", "2", "--measure", "3",
                "--hot-key-threads", "1,16,64", "--threads", "16", "--results", "redis-load.json"));
        Duration warmUp = seconds(options.get("--warm-up"));
        Duration measure = seconds(options.get("--measure"));
        List<Scenario> scenarios = new ArrayList<>();
        for (String hotKeyThreads : options.get("--hot-key-threads").split(",")) {
            scenarios.add(new Scenario(1, Traffic.PERMITTED, Integer.parseInt(hotKeyThreads.strip())));
        }
        int threads = Integer.parseInt(options.get("--threads"));
        scenarios.add(new Scenario(MANY_KEYS, Traffic.PERMITTED, threads));
        scenarios.add(new Scenario(1, Traffic.REJECTED, threads));

        List<Row> rows = new ArrayList<>();
        String redisVersion;
        try (RedisServer server = RedisServer.start()) {
            redisVersion = infoField(server.cli("INFO", "server"), "redis_version");
            // As the store sends it: the shared expiry functions, then the decision script.
            String sha = server.cli("SCRIPT", "LOAD",
                    resource("/dev/sluice/redisson/expiry.lua") + resource("/dev/sluice/redisson/decide.lua"));
            Map<RedisSubject.Client, RedissonClient> clients = RedisSubject.Client.connectAll(server.address());
            try {
                checkScriptCall(server, sha, clients.get(RedisSubject.Client.TUNED));
                // Compiles Redisson, netty and the store before the first row, which would otherwise pay for it.
                server.flushAll();
                measure(server, new Scenario(1, Traffic.PERMITTED, 16), RedisSubject.all(Limits.PERMITTED).get(0),
                        clients.get(RedisSubject.Client.TUNED), warmUp.multipliedBy(2), Duration.ofMillis(1));
                for (Scenario scenario : scenarios) {
                    double fastest = 0;
                    Set<List<Tier>> scriptCalls = new LinkedHashSet<>();
                    for (RedisSubject subject : RedisSubject.all(scenario.traffic().limits)) {
                        server.flushAll();
                        Row row = measure(server, scenario, subject, clients.get(subject.client()), warmUp, measure);
                        rows.add(print(row));
                        if (row.scriptCallsPerDecision() >= 0.5) {
                            // Local counting, which rarely calls Redis, does not set the ceiling's pace.
                            fastest = Math.max(fastest, row.decisionsPerSecond());
                        }
                        if (!subject.scriptTiers().isEmpty()) {
                            scriptCalls.add(subject.scriptTiers());
                        }
                    }
                    // Two measurements at the fastest subject's pace: about a measurement at the ceiling's.
                    long requests = Math.max(2_000, (long) (fastest * measure.toNanos() / 1e9 * 2));
                    for (List<Tier> tiers : scriptCalls) {
                        server.flushAll();
                        rows.add(print(ceiling(server, sha, scenario, tiers, requests)));
                    }
                }
            } finally {
                clients.values().forEach(RedissonClient::shutdown);
            }
        }
        Path results = Path.of(options.get("--results"));
        Files.createDirectories(results.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(results.toFile(),
                new Results(redisVersion, warmUp.toMillis() / 1e3, measure.toMillis() / 1e3, rows));
    }

    /** Whether calls are admitted, and the limits that make them so. */
    enum Traffic {
        /** Every call admitted. */
        PERMITTED(Limits.PERMITTED),
        /** Every call but the first rejected. */
        REJECTED(Limits.REJECTED);

        final Limits limits;

        Traffic(Limits limits) {
            this.limits = limits;
        }
    }

    /**
     * What a row measures.
     *
     * @param keys    how many keys the calls are spread over, at random
     * @param traffic admitted or rejected calls
     * @param threads calling threads (the ceiling sends over one connection)
     */
    record Scenario(int keys, Traffic traffic, int threads) {
    }

    /**
     * All rows, and how they were measured.
     *
     * @param redisVersion   the server's version
     * @param warmUpSeconds  the warm-up of each row
     * @param measureSeconds the measurement of each row
     * @param rows           the rows, in the order measured
     */
    record Results(String redisVersion, double warmUpSeconds, double measureSeconds, List<Row> rows) {
    }

    /**
     * One subject, or the ceiling, under one scenario. Latencies are in milliseconds, CPU times
     * in microseconds; the ceiling's latency and what its C client spends are not measured
     * ({@code null}).
     *
     * @param keys                   how many keys the calls were spread over
     * @param traffic                {@code PERMITTED} or {@code REJECTED}
     * @param threads                calling threads
     * @param subject                who decided
     * @param client                 the Redisson client, or {@code redis-cli --pipe} for the ceiling
     * @param sluice                 whether Sluice decided
     * @param scriptCall             the tiers of the Lua script call, for Sluice's Lua store and the
     *                               ceiling; {@code null} for the others
     * @param decisionsPerSecond     decisions a second
     * @param admittedShare          the share of decisions that admitted the call
     * @param p50Millis              median latency
     * @param p99Millis              99th percentile
     * @param p999Millis             99.9th percentile
     * @param clientCpuMicros        the client JVM's CPU time per decision
     * @param clientBytes            what the client JVM allocated per decision
     * @param serverCpuMicros        the server's CPU time per decision
     * @param netBytes               bytes the server read and wrote per decision, on all connections
     * @param scriptMicrosPerCall    the server's time per script call, from its command statistics
     * @param scriptCallsPerDecision script calls per decision
     * @param failures               calls that got no decision (the store's timeout, its circuit
     *                               breaker, a client error): not counted as decisions
     */
    record Row(int keys, Traffic traffic, int threads, String subject, String client, boolean sluice,
               @Nullable String scriptCall, double decisionsPerSecond, @Nullable Double admittedShare,
               @Nullable Double p50Millis, @Nullable Double p99Millis, @Nullable Double p999Millis,
               @Nullable Double clientCpuMicros,
               @Nullable Double clientBytes, double serverCpuMicros, double netBytes,
               @Nullable Double scriptMicrosPerCall,
               double scriptCallsPerDecision, long failures) {

        /**
         * Whether this row is {@code redis-cli --pipe}'s.
         *
         * @return whether it is the ceiling
         */
        boolean ceiling() {
            return client.equals(CEILING_CLIENT);
        }
    }

    /**
     * Measures one subject under one scenario: threads call as fast as they can, warm up, then
     * are measured.
     *
     * @param server   the server the client connects to, for its statistics
     * @param scenario the keys, limits and threads
     * @param subject  who decides
     * @param client   the client the subject runs on
     * @param warmUp   how long the threads call before the measurement
     * @param measure  how long the measurement lasts
     * @return the row
     * @throws InterruptedException when interrupted while the threads call
     */
    static Row measure(RedisServer server, Scenario scenario, RedisSubject subject, RedissonClient client,
                       Duration warmUp, Duration measure) throws InterruptedException {
        String[] keys = new String[scenario.keys()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "bench:user-" + i;
        }
        Decider decider = subject.opener().open(client, keys);
        CountDownLatch go = new CountDownLatch(1);
        List<Caller> callers = new ArrayList<>();
        for (int t = 0; t < scenario.threads(); t++) {
            Caller caller = new Caller(decider, keys.length, go);
            caller.start();
            callers.add(caller);
        }
        // The warm-up starts once every thread has started, which for hundreds takes a while on a busy machine.
        long from = System.nanoTime() + warmUp.toNanos();
        long to = from + measure.toNanos();
        for (Caller caller : callers) {
            caller.from = from;
            caller.to = to;
        }
        go.countDown();
        parkUntil(from);
        ClientUsage clientBefore = ClientUsage.sample();
        ServerStats serverBefore = ServerStats.sample(server.port());
        parkUntil(to);
        ClientUsage.Spent clientSpent = ClientUsage.sample().since(clientBefore);
        ServerStats serverSpent = ServerStats.sample(server.port()).since(serverBefore);
        long admitted = 0;
        long failures = 0;
        List<long[]> latencies = new ArrayList<>();
        for (Caller caller : callers) {
            caller.join();
            admitted += caller.admitted;
            failures += caller.failures;
            latencies.add(Arrays.copyOf(caller.latencies, caller.decisions));
        }
        long[] sorted = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        double decisions = Math.max(1, sorted.length);
        List<Tier> tiers = subject.scriptTiers();
        return new Row(scenario.keys(), scenario.traffic(), scenario.threads(), subject.name(),
                subject.client().label(), subject.sluice(), tiers.isEmpty() ? null : describe(tiers),
                sorted.length / (measure.toNanos() / 1e9), admitted / decisions, percentile(sorted, 0.50),
                percentile(sorted, 0.99), percentile(sorted, 0.999), clientSpent.cpuNanos() / 1e3 / decisions,
                clientSpent.allocatedBytes() / decisions, serverSpent.cpuSeconds() * 1e6 / decisions,
                serverSpent.netBytes() / decisions,
                serverSpent.scriptCalls() == 0 ? null : serverSpent.scriptMicros() / (double) serverSpent.scriptCalls(),
                serverSpent.scriptCalls() / decisions, failures);
    }

    /**
     * A calling thread: once let go, calls until the end of the measurement, and keeps what falls
     * inside it. Keys are drawn at random for each call.
     */
    private static final class Caller extends Thread {

        private final Decider decider;
        private final int keys;
        private final CountDownLatch go;
        /** The measurement, set before the thread is let go. */
        private long from;
        private long to;
        /** Room for any row's calls made up front, so that growing it is not counted as the client's garbage. */
        private long[] latencies = new long[1 << 16];
        private int decisions;
        private long admitted;
        private long failures;

        Caller(Decider decider, int keys, CountDownLatch go) {
            this.decider = decider;
            this.keys = keys;
            this.go = go;
        }

        @Override
        public void run() {
            try {
                go.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (long start = System.nanoTime(); start < to; start = System.nanoTime()) {
                int key = keys == 1 ? 0 : random.nextInt(keys);
                boolean allowed = false;
                boolean failed = false;
                try {
                    allowed = decider.decide(key);
                } catch (RuntimeException e) {
                    failed = true;
                }
                long end = System.nanoTime();
                if (start < from || end > to) {
                    continue;
                }
                if (failed) {
                    failures++;
                    continue;
                }
                if (decisions == latencies.length) {
                    latencies = Arrays.copyOf(latencies, decisions * 2);
                }
                latencies[decisions++] = end - start;
                admitted += allowed ? 1 : 0;
            }
        }
    }

    /**
     * The client JVM's CPU time and allocations so far: the CPU time of the process, and the bytes
     * allocated by each live thread.
     */
    record ClientUsage(long cpuNanos, Map<Long, Long> allocatedBytesByThread) {

        /** Samples the client JVM now. */
        static ClientUsage sample() {
            var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long[] ids = threads.getAllThreadIds();
            long[] bytes = threads.getThreadAllocatedBytes(ids);
            Map<Long, Long> byThread = new HashMap<>();
            for (int i = 0; i < ids.length; i++) {
                if (bytes[i] >= 0) {
                    byThread.put(ids[i], bytes[i]);
                }
            }
            var process = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            return new ClientUsage(process.getProcessCpuTime(), byThread);
        }

        /** What was spent since an earlier sample, by the threads alive now. */
        Spent since(ClientUsage earlier) {
            long allocated = 0;
            for (Map.Entry<Long, Long> thread : allocatedBytesByThread.entrySet()) {
                allocated += thread.getValue() - earlier.allocatedBytesByThread.getOrDefault(thread.getKey(), 0L);
            }
            return new Spent(cpuNanos - earlier.cpuNanos, allocated);
        }

        record Spent(long cpuNanos, long allocatedBytes) {
        }
    }

    /**
     * The ceiling: {@code redis-cli --pipe} sending {@code calls} script calls of {@code tiers},
     * each as Sluice's store sends it, pipelined all at once over one connection, so that the
     * server, not the client, sets the pace. With many keys each call draws its key at random;
     * each call has its own id, so that sliding logs get an entry per call.
     */
    private static Row ceiling(RedisServer server, String sha, Scenario scenario, List<Tier> tiers, long calls) {
        ByteArrayOutputStream protocol = new ByteArrayOutputStream();
        for (long i = 0; i < calls; i++) {
            String key = "bench:user-" + ThreadLocalRandom.current().nextInt(scenario.keys());
            protocol.writeBytes(scriptCall(sha, key, tiers, "call-" + i).protocol());
        }
        ServerStats before = ServerStats.sample(server.port());
        long started = System.nanoTime();
        pipe(server, protocol.toByteArray(), calls);
        double seconds = (System.nanoTime() - started) / 1e9;
        ServerStats spent = ServerStats.sample(server.port()).since(before);
        double scriptCalls = spent.scriptCalls();
        return new Row(scenario.keys(), scenario.traffic(), scenario.threads(), CEILING_CLIENT + ", " + describe(tiers),
                CEILING_CLIENT, false, describe(tiers), calls / seconds, null, null, null, null, null, null,
                spent.cpuSeconds() * 1e6 / scriptCalls, spent.netBytes() / (double) calls,
                spent.scriptMicros() / scriptCalls, scriptCalls / calls, 0);
    }

    /** Sends raw protocol through {@code redis-cli --pipe}, which must report {@code replies} replies and no error. */
    private static void pipe(RedisServer server, byte[] protocol, long replies) {
        try {
            Process process = new ProcessBuilder("redis-cli", "-p", String.valueOf(server.port()), "--pipe")
                    .redirectErrorStream(true).start();
            try (var input = process.getOutputStream()) {
                input.write(protocol);
            }
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (process.waitFor() != 0 || !output.contains("errors: 0, replies: " + replies)) {
                throw new IllegalStateException("redis-cli --pipe did not get " + replies + " replies:\n" + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * An {@code EVALSHA} of the store's script.
     *
     * @param command {@code EVALSHA}, the SHA-1, the number of keys, the keys, then the call's id
     * @param figures the last argument: the call's figures, packed
     */
    record ScriptCall(List<String> command, byte[] figures) {

        /** The Redis keys the call names. */
        Set<String> keys() {
            return Set.copyOf(command.subList(3, 3 + Integer.parseInt(command.get(2))));
        }

        /** The call as the Redis protocol has it, the figures last. */
        byte[] protocol() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(("*" + (command.size() + 1) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (String word : command) {
                bulk(out, word.getBytes(StandardCharsets.UTF_8));
            }
            bulk(out, figures);
            return out.toByteArray();
        }

        private static void bulk(ByteArrayOutputStream out, byte[] bytes) {
            out.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.writeBytes(bytes);
            out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
    }

    /**
     * The {@code EVALSHA} {@link RedissonRateLimitStore} sends to decide one call for
     * {@code storeKey}. Its keys and arguments are built here as the store's {@code call} method
     * builds them, and must change with it; {@link #checkScriptCall} stops the run when they no
     * longer match. Differences: no deadline (the store sends one once it has learnt the server's
     * clock), and {@code callId} as given (sent, as by the store, only when a tier is a sliding
     * log).
     *
     * @param sha      the script's SHA-1
     * @param storeKey the key as the store receives it, which it uses as is: at most 128
     *                 characters, no braces, not starting with {@code #}
     * @param tiers    the tiers of the call
     * @param callId   the call's id, which names its sliding-log entries
     * @return the call
     */
    static ScriptCall scriptCall(String sha, String storeKey, List<Tier> tiers, String callId) {
        String base = "sluice:{" + storeKey + "}:";
        List<String> keys = new ArrayList<>();
        List<String> logs = new ArrayList<>();
        ByteBuffer figures = ByteBuffer.allocate(40 + 34 * tiers.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putDouble(Double.NaN)  // the time: the server's TIME, the store's default
                .putDouble(1)           // the cost
                .putDouble(Double.NaN)  // no deadline
                .putDouble(0)           // decided now, never reserved
                .putDouble(1);          // one call
        for (Tier tier : tiers) {
            String code = switch (tier.algorithm()) {
                case FIXED_WINDOW -> "fw";
                case SLIDING_WINDOW -> "sw";
                case SLIDING_LOG -> "sl";
                case TOKEN_BUCKET -> "tb";
                case CONCURRENCY -> throw new IllegalArgumentException("the load runs rate tiers, not " + tier);
            };
            String state = base + code + tier.windowMillis();
            keys.add(state);
            if (tier.algorithm() == Algorithm.SLIDING_LOG) {
                logs.add(state + ":log");
            }
            figures.put(code.getBytes(StandardCharsets.US_ASCII)).putDouble(tier.limit())
                    .putDouble(tier.windowMillis()).putDouble(tier.countRejected() ? 1 : 0)
                    .putDouble(tier.blockFor().toMillis());
        }
        // Each tier's state, then the log of each sliding-log tier.
        keys.addAll(logs);
        List<String> command = new ArrayList<>(List.of("EVALSHA", sha, String.valueOf(keys.size())));
        command.addAll(keys);
        command.add(tiers.stream().anyMatch(tier -> tier.algorithm() == Algorithm.SLIDING_LOG) ? callId : "");
        return new ScriptCall(command, figures.array());
    }

    /**
     * Stops the run unless {@link #scriptCall} still matches what the store sends: the keys it
     * names must be the keys the store writes for one decision on every algorithm, and the
     * script must count the call as admitted.
     */
    private static void checkScriptCall(RedisServer server, String sha, RedissonClient client) {
        List<Tier> tiers = Arrays.stream(Algorithm.values()).filter(algorithm -> algorithm != Algorithm.CONCURRENCY)
                .map(algorithm -> Tier.of(1_000, Duration.ofHours(1), algorithm)).toList();
        server.flushAll();
        RedissonRateLimitStore.builder(client).build().tryAcquire("bench:check", tiers, 1);
        Set<String> written = Set.of(server.cli("--scan").split("\n"));
        ScriptCall call = scriptCall(sha, "bench:check", tiers, "check");
        Set<String> named = call.keys();
        server.flushAll();
        pipe(server, call.protocol(), 1);
        // A fixed window counts only admitted calls.
        long counted = named.stream().filter(key -> key.endsWith(":fw3600000")).findFirst()
                .map(key -> server.tierState(key, "n")).orElse(0L);
        server.flushAll();
        if (!written.equals(named) || counted != 1) {
            throw new IllegalStateException("RedisLoad.scriptCall no longer sends what RedissonRateLimitStore"
                    + " sends; adjust it to the store's call method. The store wrote " + sorted(written)
                    + ", scriptCall names " + sorted(named) + ", and the script counted " + counted
                    + " admitted calls instead of 1");
        }
    }

    private static String sorted(Set<String> values) {
        return values.stream().sorted().collect(Collectors.joining(", ", "[", "]"));
    }

    /** Tiers as the report shows a script call: {@code SLIDING_WINDOW 1s + FIXED_WINDOW 1h}. */
    static String describe(List<Tier> tiers) {
        return tiers.stream().map(tier -> tier.algorithm() + " " + shortly(tier.window()))
                .collect(Collectors.joining(" + "));
    }

    /** {@code 1s}, {@code 1h}: a duration as a person writes it. */
    static String shortly(Duration duration) {
        return duration.toString().substring(2).toLowerCase(Locale.ROOT);
    }

    private static double percentile(long[] sortedNanos, double quantile) {
        if (sortedNanos.length == 0) {
            return Double.NaN;
        }
        return sortedNanos[(int) Math.min(sortedNanos.length - 1, Math.floor(quantile * sortedNanos.length))] / 1e6;
    }

    /** Prints a row as it is measured, and returns it. */
    static Row print(Row row) {
        System.out.printf(Locale.ROOT, "%6d key(s) %-9s %2d threads | %-52s %-16s | %8.0f/s p50 %6s p99 %6s"
                        + " p99.9 %6s ms | %d failed%n", row.keys(), row.traffic(), row.threads(), row.subject(),
                row.client(), row.decisionsPerSecond(), ResultsReport.millis(row.p50Millis()),
                ResultsReport.millis(row.p99Millis()), ResultsReport.millis(row.p999Millis()), row.failures());
        return row;
    }

    /** Waits until {@link System#nanoTime()} reaches {@code nanoTime}. */
    static void parkUntil(long nanoTime) {
        for (long left = nanoTime - System.nanoTime(); left > 0; left = nanoTime - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /** The value of a field of an {@code INFO} reply, or {@code unknown}. */
    static String infoField(String info, String field) {
        return info.lines().filter(line -> line.startsWith(field + ":")).findFirst()
                .map(line -> line.substring(field.length() + 1).strip()).orElse("unknown");
    }

    /** A duration given in seconds, such as {@code 0.5}. */
    static Duration seconds(String seconds) {
        return Duration.ofMillis(Math.round(Double.parseDouble(seconds) * 1000));
    }

    /** {@code --name value} pairs over defaults; an unknown name stops the run. */
    static Map<String, String> options(String[] args, Map<String, String> defaults) {
        Map<String, String> options = new HashMap<>(defaults);
        for (int i = 0; i < args.length; i += 2) {
            if (!defaults.containsKey(args[i]) || i + 1 == args.length) {
                throw new IllegalArgumentException("unknown or incomplete option " + args[i] + "; options: "
                        + sorted(defaults.keySet()));
            }
            options.put(args[i], args[i + 1]);
        }
        return options;
    }

    private static String resource(String name) {
        try (InputStream in = Objects.requireNonNull(RedisLoad.class.getResourceAsStream(name), name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
