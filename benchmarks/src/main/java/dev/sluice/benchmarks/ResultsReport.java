package dev.sluice.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.benchmarks.RedisLoad.Row;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.springframework.core.SpringVersion;

/**
 * Writes {@code RESULTS.md} from what the benchmarks left in the results directory: JMH's JSON
 * files ({@code jmh-*.json}), {@code redis-load.json} from {@link RedisLoad},
 * {@code redis-batching.json} from {@link RedisBatching},
 * {@code local-sync.json} from {@link LocalSyncOvershoot}, {@code waiting.json} from
 * {@link WaitingCallers} and {@code memory.json} from
 * {@link MemoryFootprint}; a part that did not run is said to be missing. The section measured by
 * hand, at the end of the report it replaces, is kept as it is.
 * Besides the figures: the machine, the JDK, every library's version, and the command that
 * produced them.
 */
public final class ResultsReport {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The heading of the section measured by hand, which a run keeps as it is. */
    private static final String MEASURED_BY_HAND = "## Through Spring Cloud Gateway";
    /** The size of the bursts the goal on bursts is about. */
    private static final int GOAL_BURST = 10_000;

    /** JMH benchmarks by method, as the report names them, in the order it shows them. */
    private static final Map<String, String> DECISIONS = labels(
            "SluiceDecisionBenchmark.tryAcquire:FIXED_WINDOW", "Sluice FIXED_WINDOW",
            "SluiceDecisionBenchmark.tryAcquire:SLIDING_WINDOW", "Sluice SLIDING_WINDOW",
            "SluiceDecisionBenchmark.tryAcquire:SLIDING_LOG", "Sluice SLIDING_LOG",
            "SluiceDecisionBenchmark.tryAcquire:TOKEN_BUCKET", "Sluice TOKEN_BUCKET",
            "PeerDecisionBenchmark.resilience4j", "Resilience4j AtomicRateLimiter",
            "PeerDecisionBenchmark.bucket4j", "Bucket4j local bucket",
            "PeerDecisionBenchmark.guava", "Guava RateLimiter");
    private static final Map<String, String> ANNOTATED_CALLS = labels(
            "AnnotatedCallBenchmark.sluice", "Sluice `@RateLimited(key = \"#id\")`",
            "BootAnnotatedCallBenchmark.sluice", "Sluice, the same in Spring Boot with actuator and Prometheus",
            "AnnotatedCallBenchmark.resilience4j", "Resilience4j `@RateLimiter(name = \"#id\")`",
            "AnnotatedCallBenchmark.resilience4jOneLimiter", "Resilience4j `@RateLimiter(name = \"annotated\")`",
            "AnnotatedCallBenchmark.unproxied", "the same method, no proxy (the floor)");

    private static final Map<String, String> CONCURRENCY_PAIRS = labels(
            "ConcurrencyBenchmark.sluice", "Sluice CONCURRENCY tier",
            "ConcurrencyBenchmark.resilience4j", "Resilience4j SemaphoreBulkhead");

    private ResultsReport() {
    }

    /**
     * Writes the report.
     *
     * @param args {@code --results DIR} (default {@code benchmarks/target/results}),
     *             {@code --output FILE} (default {@code benchmarks/RESULTS.md}), {@code --command}
     *             the command that ran the benchmarks, {@code --quick true} for a smoke run,
     *             {@code --elapsed} how long it took, in seconds
     * @throws IOException when a file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> options = RedisLoad.options(args, Map.of("--results", "benchmarks/target/results",
                "--output", "benchmarks/RESULTS.md", "--command", "benchmarks/run", "--quick", "false",
                "--elapsed", "0"));
        Path results = Path.of(options.get("--results"));
        List<JmhResult> jmh = readJmh(results);
        Path redisFile = results.resolve("redis-load.json");
        RedisLoad.@Nullable Results redis = Files.exists(redisFile)
                ? JSON.readValue(redisFile.toFile(), RedisLoad.Results.class) : null;
        Path batchingFile = results.resolve("redis-batching.json");
        RedisBatching.@Nullable Results batching = Files.exists(batchingFile)
                ? JSON.readValue(batchingFile.toFile(), RedisBatching.Results.class) : null;
        Path overshootFile = results.resolve("local-sync.json");
        List<LocalSyncOvershoot.Row> overshoot = Files.exists(overshootFile)
                ? Arrays.asList(JSON.readValue(overshootFile.toFile(), LocalSyncOvershoot.Row[].class)) : List.of();
        Path waitingFile = results.resolve("waiting.json");
        List<WaitingCallers.Row> waiting = Files.exists(waitingFile)
                ? Arrays.asList(JSON.readValue(waitingFile.toFile(), WaitingCallers.Row[].class)) : List.of();
        Path memoryFile = results.resolve("memory.json");
        List<MemoryFootprint.Row> memory = Files.exists(memoryFile)
                ? Arrays.asList(JSON.readValue(memoryFile.toFile(), MemoryFootprint.Row[].class)) : List.of();

        Markdown md = new Markdown();
        long elapsed = Long.parseLong(options.get("--elapsed"));
        md.line("# Sluice beside other rate limiters: benchmark results");
        md.line();
        md.line("Written by `benchmarks/run` on " + DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")
                .format(Instant.now().atOffset(ZoneOffset.UTC)) + (elapsed > 0
                ? ", which took " + elapsed / 60 + " min " + elapsed % 60 + " s" : "") + ", with:");
        md.line();
        md.line("```");
        md.line(options.get("--command"));
        md.line("```");
        md.line();
        if (Boolean.parseBoolean(options.get("--quick"))) {
            md.line("**A smoke run** (`--quick`): every part ran, too briefly for its figures to be measurements."
                    + " Run `benchmarks/run` for those.");
            md.line();
        }
        md.line("Figures from one run on one machine: compare the rows of a table with each other rather than"
                + " with another machine's. On a shared or virtual machine repeated runs differ by 10% and more.");
        machineAndVersions(md, jmh, redis);
        inJvm(md, jmh);
        throughRedis(md, redis);
        batching(md, batching);
        localSyncOvershoot(md, overshoot);
        waitingCallers(md, waiting);
        memory(md, memory);
        Path output = Path.of(options.get("--output"));
        Files.writeString(output, md + measuredByHand(output));
    }

    /**
     * What the report being replaced holds from the section measured by hand on (the gateway's,
     * which the run does not measure), so that a new run keeps it; nothing when there is none.
     */
    private static String measuredByHand(Path output) throws IOException {
        if (!Files.exists(output)) {
            return "";
        }
        String previous = Files.readString(output);
        int at = previous.indexOf("\n" + MEASURED_BY_HAND);
        return at < 0 ? "" : "\n" + previous.substring(at + 1);
    }

    private static void machineAndVersions(Markdown md, List<JmhResult> jmh, RedisLoad.@Nullable Results redis) {
        md.section("## Machine and versions");
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("CPUs (`nproc`)", String.valueOf(Runtime.getRuntime().availableProcessors())));
        rows.add(List.of("CPU", procField("/proc/cpuinfo", "model name").orElse("unknown")));
        rows.add(List.of("Memory", procField("/proc/meminfo", "MemTotal")
                .map(total -> String.format(Locale.ROOT, "%.1f GiB",
                        Long.parseLong(total.replace("kB", "").strip()) / 1024.0 / 1024.0))
                .orElse("unknown")));
        rows.add(List.of("OS", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch")));
        rows.add(List.of("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version")
                + " (" + System.getProperty("java.vm.vendor") + ")"));
        Properties versions = versions();
        rows.add(List.of("Sluice", versions.getProperty("sluice")));
        rows.add(List.of("Caffeine (Sluice's in-memory store)", versions.getProperty("caffeine")));
        rows.add(List.of("Redisson", versions.getProperty("redisson")));
        rows.add(List.of("Bucket4j", "core " + versions.getProperty("bucket4j") + ", Redisson module "
                + versions.getProperty("bucket4j-redisson")));
        rows.add(List.of("Resilience4j", versions.getProperty("resilience4j")));
        rows.add(List.of("Guava", versions.getProperty("guava")));
        rows.add(List.of("Spring Framework", Objects.requireNonNullElse(SpringVersion.getVersion(), "unknown")));
        rows.add(List.of("JMH", jmh.isEmpty() ? "not run" : jmh.get(0).jmhVersion()));
        rows.add(List.of("redis-server", redis == null ? "not run" : redis.redisVersion()));
        md.table(List.of("", ""), 2, rows);
    }

    private static void inJvm(Markdown md, List<JmhResult> jmh) {
        md.section("## In the JVM");
        if (jmh.isEmpty()) {
            md.line("Not run: no `jmh-*.json` in the results.");
            return;
        }
        JmhResult settings = jmh.get(0);
        String forks = jmh.stream().collect(Collectors.toMap(JmhResult::threads, JmhResult::forks, Math::max,
                        TreeMap::new)).entrySet().stream()
                .map(e -> e.getValue() + (e.getValue() == 1 ? " fork" : " forks") + " with " + e.getKey()
                        + (e.getKey() == 1 ? " thread" : " threads"))
                .collect(Collectors.joining(", "));
        md.line("JMH " + settings.jmhVersion() + ", average time per call in ns and bytes allocated per call"
                + " (`-prof gc`, `gc.alloc.rate.norm`); " + forks + ", each fork (a JVM of its own) "
                + settings.warmupIterations() + " warm-up iteration(s) of " + settings.warmupTime() + " and "
                + settings.measurementIterations() + " measured of " + settings.measurementTime() + ". A time is"
                + " the median of the forks' averages, with the lowest and the highest in brackets: forks differ"
                + " more than iterations do, as each JVM lays its objects out in memory its own way, so the spread"
                + " of the forks is what a change must beat to show. Every call is admitted: 1,000,000,000 permits"
                + " per second. The key of each call is read from an array made beforehand; every key had a"
                + " call before the measurement. \"÷ best other\" divides Sluice's time per call by the fastest"
                + " other library's in the table: 2.00 means twice as long.");
        md.line();
        md.line("**One decision.** Sluice: `RateLimiter.tryAcquire(key)` on an `InMemoryRateLimitStore` bounded"
                + " at 200,000 keys (the limiter prefixes each key with its name; the store keeps each key's state"
                + " in Caffeine). The others, with the same limit, kept per key as an application without Sluice"
                + " would keep them: for one key, the limiter itself, with no lookup at all; for 100,000 keys, a"
                + " `ConcurrentHashMap` from key to limiter (never bounded, never expired) and `computeIfAbsent`"
                + " on every call. Resilience4j: `AtomicRateLimiter.acquirePermission()`, no waiting."
                + " Bucket4j: a local bucket (lock-free, the default) refilled greedily, `tryConsume(1)`."
                + " Guava: `RateLimiter.create(permitsPerSecond).tryAcquire()`, which spaces permits out"
                + " evenly rather than counting them per window.");
        jmhTables(md, jmh, DECISIONS, label -> !label.startsWith("Sluice"));
        collidingKeys(md, jmh);
        md.line();
        md.line("**A call to an annotated method of a Spring bean**, through its proxy, in a plain"
                + " `AnnotationConfigApplicationContext`. Sluice: `@EnableRateLimiting` and"
                + " `@RateLimited(key = \"#id\", limit = 1_000_000_000, window = \"1s\")` (sliding window, the"
                + " default). Resilience4j: `resilience4j-spring6`'s `RateLimiterConfiguration` and"
                + " `@RateLimiter(name = \"#id\")`. Resilience4j's annotation has no key: `name` picks a limiter"
                + " from its registry, and a name starting with `#` is a SpEL expression, parsed anew on every"
                + " call, so `\"#id\"` gives each key a limiter of its own, kept in the registry for good;"
                + " `\"annotated\"` is one limiter for all keys. The floor calls Sluice's method on an instance"
                + " without a proxy. Every method returns its argument. The Spring Boot row is the same Sluice"
                + " method in a Spring Boot application as users run it: the starter's auto-configuration, the"
                + " actuator and a Prometheus registry (`micrometer-registry-prometheus`), so every decision is"
                + " counted (`sluice.decisions`) and the store timed (`sluice.store.latency`; over the in-memory"
                + " store, one decision in 64).");
        jmhTables(md, jmh, ANNOTATED_CALLS, label -> label.startsWith("Resilience4j"));
        md.line();
        md.line("**A permit of a concurrency limit taken and given back**, as a call that runs no time holds"
                + " it, with a limit no run reaches. Sluice: `RateLimiter.tryAcquire(key)` then `release` with"
                + " `Tier.concurrency(1_000_000, 30s)` on the in-memory store. Resilience4j: a `SemaphoreBulkhead`"
                + " per key, kept as for the decisions above, `tryAcquirePermission()` then `onComplete()`.");
        jmhTables(md, jmh, CONCURRENCY_PAIRS, label -> label.startsWith("Resilience4j"));
    }

    /** What keys sharing one {@code String.hashCode} cost a decision, beside ordinary keys. */
    private static void collidingKeys(Markdown md, List<JmhResult> jmh) {
        String benchmark = "CollidingKeysBenchmark.tryAcquire:";
        List<List<String>> rows = jmh.stream().map(JmhResult::threads).distinct().sorted().map(threads -> {
            Optional<JmhResult> ordinary = find(jmh, benchmark + "ordinary", 0, threads);
            Optional<JmhResult> colliding = find(jmh, benchmark + "colliding", 0, threads);
            return List.of(threads + (threads == 1 ? " thread" : " threads"),
                    ordinary.map(ResultsReport::time).orElse("—"), colliding.map(ResultsReport::time).orElse("—"),
                    ordinary.isPresent() && colliding.isPresent()
                            ? ratio(colliding.get().score() / ordinary.get().score()) : "");
        }).filter(row -> !row.get(1).equals("—") || !row.get(2).equals("—")).toList();
        if (rows.isEmpty()) {
            return;
        }
        md.line();
        md.line("**Keys chosen to collide.** The same decision (sliding window) in a store holding"
                + " " + String.format(Locale.ROOT, "%,d", CollidingKeysBenchmark.KEYS) + " keys of 34 characters,"
                + " each call for one drawn at random: ordinary keys, and keys made of \"Aa\" and \"BB\" blocks,"
                + " which all share one `String.hashCode`. The store finds a key decided lately at the"
                + " place its `String.hashCode` gives it; the first key at a place keeps it, and others are"
                + " looked up in Caffeine, which hashes keys with SipHash under a secret of the store's, so that"
                + " they spread as others do.");
        md.line();
        md.table(List.of("", "ordinary, ns/call", "colliding, ns/call", "colliding ÷ ordinary"), 1, rows);
    }

    /**
     * One table per key count, with columns per thread count; Sluice's time per call is divided by
     * the best of the rows whose label {@code isOther} accepts.
     */
    private static void jmhTables(Markdown md, List<JmhResult> jmh, Map<String, String> labels,
                                  Predicate<String> isOther) {
        TreeSet<Integer> threadCounts = jmh.stream().map(JmhResult::threads)
                .collect(Collectors.toCollection(TreeSet::new));
        // The key counts of this table's benchmarks: another's (the colliding keys') would be an empty table.
        TreeSet<Integer> keyCounts = jmh.stream().filter(result -> labels.containsKey(result.benchmark()))
                .map(JmhResult::keys).collect(Collectors.toCollection(TreeSet::new));
        for (int keys : keyCounts) {
            md.line();
            md.line(String.format(Locale.ROOT, "%,d key%s:", keys, keys == 1 ? "" : "s"));
            md.line();
            List<String> header = new ArrayList<>(List.of(""));
            for (int threads : threadCounts) {
                String t = threads + (threads == 1 ? " thread" : " threads");
                header.addAll(List.of(t + ", ns/call", "bytes/call", "÷ best other"));
            }
            List<List<String>> rows = new ArrayList<>();
            for (Map.Entry<String, String> subject : labels.entrySet()) {
                List<String> row = new ArrayList<>(List.of(subject.getValue()));
                for (int threads : threadCounts) {
                    Optional<JmhResult> result = find(jmh, subject.getKey(), keys, threads);
                    Optional<Double> bestOther = labels.entrySet().stream().filter(e -> isOther.test(e.getValue()))
                            .map(e -> find(jmh, e.getKey(), keys, threads)).flatMap(Optional::stream)
                            .map(JmhResult::score).min(Double::compare);
                    row.add(result.map(ResultsReport::time).orElse("—"));
                    row.add(result.map(r -> whole(r.bytes())).orElse("—"));
                    row.add(result.isPresent() && bestOther.isPresent() && subject.getValue().startsWith("Sluice")
                            ? ratio(result.get().score() / bestOther.get()) : "");
                }
                rows.add(row);
            }
            md.table(header, 1, rows);
        }
    }

    private static void throughRedis(Markdown md, RedisLoad.@Nullable Results redis) {
        md.section("## Through Redis");
        if (redis == null) {
            md.line("Not run: no `redis-load.json` in the results.");
            return;
        }
        md.line("`RedisLoad`: a `redis-server` " + redis.redisVersion() + " of its own on the loopback interface,"
                + " emptied before each row; threads call as fast as they can, each row warmed up for "
                + seconds(redis.warmUpSeconds()) + " then measured for " + seconds(redis.measureSeconds()) + ". With"
                + " several keys, each call draws its key at random. Calls admitted: a limit of 1,000,000,000 per"
                + " second; rejected: 1 per hour, used up by the first call. Every subject runs as built by"
                + " default; Sluice's stores therefore with their 100 ms timeout and circuit breaker (\"failed\""
                + " counts calls they did not decide in time, which are not decisions).");
        md.line();
        md.line("- Sluice per algorithm, and in two tiers (a sliding window of the row's window and a fixed"
                + " window of an hour): `RedissonRateLimitStore` on the *tuned* client,"
                + " `RedissonClientConfigs.singleServer` (a pool of 8 connections kept open, netty threads near"
                + " the core count); once more, sliding window, on the *default* client, `Redisson.create(config)`"
                + " with nothing set but the address. `Bucket4jRedissonStore`: Sluice's Bucket4j store, a token"
                + " bucket, tuned client.");
        md.line("- Redisson's `RRateLimiter`, default client: one per key (`getRateLimiter(key)`, made before"
                + " the row), `trySetRate(OVERALL, limit, window)` before the row, then `tryAcquire()`.");
        md.line("- Bucket4j's own `RedissonBasedProxyManager` (compare-and-swap), default client: one bucket"
                + " proxy per key, made before the row, `tryConsume(1)`, keys expiring 10 s after the bucket is"
                + " full again.");
        md.line("- The ceiling: `redis-cli --pipe` sending Sluice's exact `EVALSHA` (the script, keys and"
                + " arguments of the store), as many calls as two measurements of the fastest subject, all"
                + " pipelined over one connection, so that the server sets the pace: its decisions a second are the"
                + " calls over the time from the first sent to the last reply. With many keys each call draws its"
                + " key at random. No latency: every call waits behind those sent before it.");
        md.line();
        md.line("Client CPU: the CPU time of the whole client JVM (calling threads, Redisson, netty, JIT and GC)"
                + " per decision; client bytes: what all its threads allocated, per decision. Server CPU:"
                + " `used_cpu_sys + used_cpu_user` of `INFO cpu` per decision; script µs: the time of each script"
                + " call (`EVAL`, `EVALSHA`) in `INFO commandstats`, the commands it runs included; scripts:"
                + " script calls per decision (Bucket4j's compare-and-swap also reads with a plain `GET`, and"
                + " calls its script again when another client changed the bucket first); scripts/s: script calls"
                + " a second, what the subject costs Redis. \"÷ RRateLimiter\" and"
                + " \"÷ ceiling\" divide Sluice's decisions a second by RRateLimiter's and by the ceiling's with"
                + " the same tiers: above 1 is faster.");
        Map<String, List<Row>> scenarios = redis.rows().stream().collect(Collectors.groupingBy(
                row -> row.keys() + "/" + row.traffic() + "/" + row.threads(), LinkedHashMap::new,
                Collectors.toList()));
        for (List<Row> rows : scenarios.values()) {
            Row first = rows.get(0);
            md.line();
            md.line(String.format(Locale.ROOT, "**%s, calls %s, %d thread%s:**", first.keys() == 1 ? "One hot key"
                            : String.format(Locale.ROOT, "%,d keys", first.keys()),
                    first.traffic() == RedisLoad.Traffic.PERMITTED ? "admitted" : "rejected", first.threads(),
                    first.threads() == 1 ? "" : "s"));
            md.line();
            Optional<Row> redisson = rows.stream()
                    .filter(row -> row.subject().equals(RedisSubject.REDISSON_RATE_LIMITER)).findFirst();
            List<List<String>> table = new ArrayList<>();
            for (Row row : rows) {
                Optional<Row> ceiling = rows.stream().filter(Row::ceiling)
                        .filter(c -> !row.ceiling() && Objects.equals(c.scriptCall(), row.scriptCall())).findFirst();
                table.add(List.of(row.subject(), row.client(), whole(row.decisionsPerSecond()),
                        row.admittedShare() == null ? "—"
                                : String.format(Locale.ROOT, "%.0f%%", row.admittedShare() * 100),
                        millis(row.p50Millis()), millis(row.p99Millis()), millis(row.p999Millis()),
                        row.clientCpuMicros() == null ? "—" : tenths(row.clientCpuMicros()),
                        row.clientBytes() == null ? "—" : whole(row.clientBytes()),
                        tenths(row.serverCpuMicros()),
                        row.scriptMicrosPerCall() == null ? "—" : tenths(row.scriptMicrosPerCall()),
                        hundredths(row.scriptCallsPerDecision()),
                        whole(row.scriptCallsPerDecision() * row.decisionsPerSecond()), String.valueOf(row.failures()),
                        row.sluice() && redisson.isPresent() && !row.subject().equals(RedisSubject.CONCURRENCY_PAIR)
                                ? ratio(row.decisionsPerSecond() / redisson.get().decisionsPerSecond()) : "",
                        row.sluice() && ceiling.isPresent()
                                ? ratio(row.decisionsPerSecond() / ceiling.get().decisionsPerSecond()) : ""));
            }
            md.table(List.of("", "client", "decisions/s", "admitted", "p50 ms", "p99 ms", "p99.9 ms",
                    "client CPU µs", "client bytes", "server CPU µs", "script µs", "scripts", "scripts/s", "failed",
                    "÷ RRateLimiter", "÷ ceiling"), 2, table);
            Optional<Row> pairs = rows.stream().filter(row -> row.subject().equals(RedisSubject.CONCURRENCY_PAIR))
                    .findFirst();
            Optional<Row> semaphore = rows.stream()
                    .filter(row -> row.subject().equals(RedisSubject.REDISSON_SEMAPHORE_PAIR)).findFirst();
            if (pairs.isPresent() && semaphore.isPresent()) {
                md.line();
                md.line(String.format(Locale.ROOT, "Concurrency: %s × the permits taken and given back a second of"
                                + " Redisson's `RPermitExpirableSemaphore` (%s against %s), p99 %.0f µs against %.0f µs.",
                        ratio(pairs.get().decisionsPerSecond() / semaphore.get().decisionsPerSecond()),
                        whole(pairs.get().decisionsPerSecond()), whole(semaphore.get().decisionsPerSecond()),
                        pairs.get().p99Millis() * 1000, semaphore.get().p99Millis() * 1000));
            }
            Optional<Row> localSync = rows.stream().filter(row -> row.subject().equals(RedisSubject.LOCAL_SYNC))
                    .findFirst();
            Optional<Row> redisPath = rows.stream().filter(row -> row.subject().equals("Sluice SLIDING_WINDOW")
                    && row.client().equals(RedisSubject.Client.TUNED.label())).findFirst();
            if (localSync.isPresent() && redisPath.isPresent()) {
                md.line();
                md.line(String.format(Locale.ROOT, "Local counting: %s × the decisions a second of the Redis path"
                                + " (`Sluice SLIDING_WINDOW`, tuned), p99 %.0f µs against %.0f µs, %s script calls a"
                                + " second against %s.",
                        ratio(localSync.get().decisionsPerSecond() / redisPath.get().decisionsPerSecond()),
                        localSync.get().p99Millis() * 1000, redisPath.get().p99Millis() * 1000,
                        whole(localSync.get().scriptCallsPerDecision() * localSync.get().decisionsPerSecond()),
                        whole(redisPath.get().scriptCallsPerDecision() * redisPath.get().decisionsPerSecond())));
            }
        }
    }

    private static void batching(Markdown md, RedisBatching.@Nullable Results batching) {
        md.section("## Through Redis: decisions batched per script call");
        if (batching == null) {
            md.line("Not run: no `redis-batching.json` in the results.");
            return;
        }
        md.line("`RedisBatching`: Sluice's `RedissonRateLimitStore` as built by default, which sends the decisions"
                + " waiting for it together, many per script call; the same store built with `batchSize(1)`, one"
                + " script call per decision; both on the *tuned* client, one sliding-window tier; and Redisson's"
                + " `RRateLimiter` on the *default* client, one per key, its rate set before (`trySetRate(OVERALL,"
                + " limit, window)`), then `tryAcquire()` or `tryAcquireAsync()`. All three in one run, on a"
                + " `redis-server` " + batching.redisVersion() + " of its own, emptied before each measurement."
                + " The limit is 1,000,000,000 a second, never reached, so that every call does the whole work of"
                + " an admitted decision, except in the limited burst: " + whole(batching.limitedLimit())
                + " an hour, a window long enough that no burst straddles two.");
        md.line();
        md.line("- **Blocking threads** call one hot key as fast as they can, as in \"Through Redis\": each"
                + " measurement warmed up for " + seconds(batching.warmUpSeconds()) + " then measured for "
                + seconds(batching.measureSeconds()) + ", so that the JIT compiler has done with the"
                + " client's paths (on 2 cores it still takes a core for several seconds after the first calls,"
                + " which a shorter warm-up measures as the client's CPU).");
        md.line("- **Decisions in flight**: one thread keeps " + whole(batching.inFlight()) + " asynchronous"
                + " decisions on one hot key outstanding, firing another as each is answered; warmed up and"
                + " measured as the threads are, counting the answers that came within the measurement.");
        md.line("- **Bursts**: asynchronous decisions all fired at once from one thread, then awaited, on one hot"
                + " key, and with every decision a key of its own; each burst on a new store (new limiters) warmed"
                + String.format(Locale.ROOT, " up first with %,d decisions on %,d keys of their own.",
                RedisBatching.WARM_UP_ROUNDS * RedisBatching.WARM_UP_ROUND, RedisBatching.WARM_UP_ROUND)
                + " \"Answered in\" runs from the first"
                + " fired to the last answered, failures and refusals included; decisions a second divide the"
                + " burst by it.");
        md.line();
        md.line("Decisions are calls admitted or rejected; \"failed\" counts calls that got no decision (Sluice:"
                + " `StoreUnavailableException`, the store's 100 ms timeout or its circuit breaker; `RRateLimiter`:"
                + " any exception, named), \"refused\" those the store turned away as overloaded"
                + " (`StoreOverloadedException`: its queue full, or a decision waited too long to be sent); neither"
                + " counts as a decision. Client CPU: the process CPU time of the whole client JVM"
                + " (`OperatingSystemMXBean.getProcessCpuTime`) per decision. Server CPU: `used_cpu_sys +"
                + " used_cpu_user` of `INFO cpu` per decision. Bytes: `total_net_input_bytes +"
                + " total_net_output_bytes` of `INFO stats` per decision, every connection, the statistics' own"
                + " requests left out. Script calls: the calls of `EVAL` and `EVALSHA` in `INFO commandstats`"
                + " (not `total_commands_processed`); for a burst, from just before it until the server ran no"
                + " script for " + RedisBatching.QUIET_MILLIS + " ms after it, so late calls and the store taking back"
                + " late decisions count.");
        goals(md, batching);

        md.line();
        md.line("**Blocking threads, one hot key:**");
        md.line();
        List<List<String>> threadRows = new ArrayList<>();
        for (Row row : batching.threads()) {
            Optional<Row> redisson = batching.threads().stream().filter(other -> other.threads() == row.threads()
                    && other.subject().equals(RedisSubject.REDISSON_RATE_LIMITER)).findFirst();
            threadRows.add(List.of(String.valueOf(row.threads()), row.subject(), row.client(),
                    whole(row.decisionsPerSecond()), row.sluice() && redisson.isPresent()
                            ? ratio(row.decisionsPerSecond() / redisson.get().decisionsPerSecond()) : "",
                    millis(row.p50Millis()), millis(row.p99Millis()), millis(row.p999Millis()),
                    row.clientCpuMicros() == null ? "—" : tenths(row.clientCpuMicros()),
                    tenths(row.serverCpuMicros()), whole(row.netBytes()), hundredths(row.scriptCallsPerDecision()),
                    whole(row.failures())));
        }
        md.table(List.of("threads", "", "client", "decisions/s", "÷ RRateLimiter", "p50 ms", "p99 ms", "p99.9 ms",
                "client CPU µs", "server CPU µs", "bytes", "scripts", "failed"), 3, threadRows);

        md.line();
        md.line("**Decisions in flight, one hot key:**");
        md.line();
        Optional<RedisBatching.InFlight> redissonInFlight = batching.inFlights().stream()
                .filter(row -> row.subject().equals(RedisSubject.REDISSON_RATE_LIMITER)).findFirst();
        md.table(List.of("in flight", "", "client", "decisions/s", "÷ RRateLimiter", "client CPU µs",
                "server CPU µs", "bytes", "scripts", "failed", "refused"), 3, batching.inFlights().stream()
                .map(row -> List.of(whole(row.inFlight()), row.subject(), row.client(),
                        whole(row.decisionsPerSecond()), !row.subject().equals(RedisSubject.REDISSON_RATE_LIMITER)
                                && redissonInFlight.isPresent()
                                ? ratio(row.decisionsPerSecond() / redissonInFlight.get().decisionsPerSecond()) : "",
                        tenths(row.clientCpuMicros()), tenths(row.serverCpuMicros()), whole(row.netBytes()),
                        hundredths(row.scriptCallsPerDecision()), whole(row.failed()), whole(row.overloaded())))
                .toList());

        md.line();
        md.line("**Bursts:**");
        md.line();
        md.table(List.of("keys", "burst", "", "client", "answered in ms", "decisions/s", "admitted", "failed",
                        "refused", "script calls", "decisions per script call"), 4,
                batching.bursts().stream().map(ResultsReport::burstRow).toList());

        md.line();
        md.line(String.format(Locale.ROOT, "**A limited burst:** %,d asynchronous decisions at once on one hot key"
                + " whose limit is %,d an hour, each subject on an empty server; as many must be admitted as the"
                + " limit, no more, and no fewer unless calls failed or were refused.", RedisBatching.LIMITED_BURST,
                batching.limitedLimit()));
        md.line();
        md.table(List.of("", "client", "limit", "admitted", "admitted ÷ limit", "rejected", "failed", "refused",
                        "answered in ms", "script calls"), 2,
                batching.limitedBursts().stream().map(burst -> List.of(burst.subject(), burst.client(),
                        whole(batching.limitedLimit()), whole(burst.admitted()),
                        ratio(burst.admitted() / (double) batching.limitedLimit()), whole(burst.rejected()),
                        failed(burst), whole(burst.overloaded()), tenths(burst.seconds() * 1e3),
                        whole(burst.scriptCalls()))).toList());
    }

    private static List<String> burstRow(RedisBatching.Burst burst) {
        return List.of(burst.keys() == 1 ? "one hot key" : "one per decision", whole(burst.decisions()),
                burst.subject(), burst.client(), tenths(burst.seconds() * 1e3), whole(burst.decisions() / burst.seconds()),
                whole(burst.admitted()), failed(burst), whole(burst.overloaded()), whole(burst.scriptCalls()),
                burst.scriptCalls() == 0 ? "—" : tenths(burst.decisions() / (double) burst.scriptCalls()));
    }

    /** Failed calls, with the names of their exceptions. */
    private static String failed(RedisBatching.Burst burst) {
        return whole(burst.failed()) + failureNames(burst);
    }

    /** The names of the exceptions of a burst's failed calls, in parentheses; nothing when none failed. */
    private static String failureNames(RedisBatching.Burst burst) {
        return burst.failures().isEmpty() ? "" : " (" + String.join(", ", burst.failures()) + ")";
    }

    /**
     * The goals of the batched store against this run's figures: each figure beside its target, the
     * figure divided by the target, and whether it is met; the same figures of the store sending one
     * script call per decision and of {@code RRateLimiter} beside them.
     */
    private static void goals(Markdown md, RedisBatching.Results batching) {
        md.line();
        md.line("**Goals of the batched store**, against this run's figures. \"÷ target\" divides the figure by"
                + " the target: at least 1 meets an \"at least\" goal, at most 1 an \"at most\" goal. A burst meets"
                + " its goal when every decision was answered (none failed, none refused) within the time.");
        md.line();
        List<List<String>> rows = new ArrayList<>();
        Optional<Row> redisson16 = threadsRow(batching, RedisSubject.REDISSON_RATE_LIMITER, 16);
        rows.add(goal("one hot key, 16 threads: decisions/s ÷ RRateLimiter's", Goal.AT_LEAST, 4,
                ResultsReport::ratio, subject -> threadsRow(batching, subject, 16).flatMap(row -> redisson16
                        .map(redisson -> Figure.of(row.decisionsPerSecond() / redisson.decisionsPerSecond(),
                                ResultsReport::ratio)))));
        rows.add(goal(String.format(Locale.ROOT, "%,d decisions in flight, one hot key: decisions/s",
                        batching.inFlight()), Goal.AT_LEAST, 150_000, ResultsReport::whole,
                subject -> batching.inFlights().stream().filter(row -> row.subject().equals(subject)).findFirst()
                        .map(row -> Figure.of(row.decisionsPerSecond(), ResultsReport::whole))));
        rows.add(goal("one hot key, 64 threads: server CPU µs per decision", Goal.AT_MOST, 3, ResultsReport::tenths,
                subject -> threadsRow(batching, subject, 64)
                        .map(row -> Figure.of(row.serverCpuMicros(), ResultsReport::tenths))));
        rows.add(goal("one hot key, 16 threads: p99 ms", Goal.AT_MOST, 2, ResultsReport::millis,
                subject -> threadsRow(batching, subject, 16).map(Row::p99Millis)
                        .map(p99 -> Figure.of(p99, ResultsReport::millis))));
        for (boolean hotKey : new boolean[] {true, false}) {
            rows.add(goal(String.format(Locale.ROOT, "burst of %,d, %s: ms to answer all, none failed or refused",
                            GOAL_BURST, hotKey ? "one hot key" : "a key per decision"), Goal.UNDER, 500,
                    ResultsReport::whole, subject -> goalBurst(batching, subject, hotKey).map(burst -> {
                        long unanswered = burst.failed() + burst.overloaded();
                        return new Figure(burst.seconds() * 1e3, tenths(burst.seconds() * 1e3) + (unanswered == 0
                                ? "" : "; " + whole(burst.failed()) + " failed" + failureNames(burst) + ", "
                                + whole(burst.overloaded()) + " refused"), unanswered > 0);
                    })));
        }
        rows.add(goal(String.format(Locale.ROOT, "limited burst of %,d: admitted", RedisBatching.LIMITED_BURST),
                Goal.EXACTLY, batching.limitedLimit(), ResultsReport::whole,
                subject -> batching.limitedBursts().stream().filter(burst -> burst.subject().equals(subject))
                        .findFirst().map(burst -> Figure.of(burst.admitted(), ResultsReport::whole))));
        md.table(List.of("goal", "target", "Sluice, batched", "÷ target", "met", "Sluice, batchSize(1)",
                "RRateLimiter"), 2, rows);
    }

    /** How a figure must compare with its target. */
    private enum Goal {
        AT_LEAST("≥"),
        AT_MOST("≤"),
        UNDER("<"),
        EXACTLY("=");

        final String symbol;

        Goal(String symbol) {
            this.symbol = symbol;
        }

        boolean met(double value, double target) {
            return switch (this) {
                case AT_LEAST -> value >= target;
                case AT_MOST -> value <= target;
                case UNDER -> value < target;
                case EXACTLY -> value == target;
            };
        }
    }

    /**
     * One subject's figure for a goal.
     *
     * @param value  what is compared with the target
     * @param shown  the figure as the report shows it
     * @param misses whether something besides the value misses the goal
     */
    private record Figure(double value, String shown, boolean misses) {

        static Figure of(double value, Function<Double, String> format) {
            return new Figure(value, format.apply(value), false);
        }
    }

    /**
     * One goal's row: its label and target, the batched store's figure, that figure divided by
     * the target, whether it is met, and the other subjects' figures; "not measured" for a figure
     * the run has not.
     */
    private static List<String> goal(String label, Goal goal, double target, Function<Double, String> format,
                                     Function<String, Optional<Figure>> figure) {
        Optional<Figure> batched = figure.apply(RedisSubject.BATCHED);
        return List.of(label, goal.symbol + " " + format.apply(target),
                batched.map(Figure::shown).orElse("not measured"),
                batched.map(f -> hundredths(f.value() / target)).orElse("—"),
                batched.map(f -> !f.misses() && goal.met(f.value(), target) ? "yes" : "no").orElse("—"),
                figure.apply(RedisSubject.ONE_CALL_PER_DECISION).map(Figure::shown).orElse("not measured"),
                figure.apply(RedisSubject.REDISSON_RATE_LIMITER).map(Figure::shown).orElse("not measured"));
    }

    private static Optional<Row> threadsRow(RedisBatching.Results batching, String subject, int threads) {
        return batching.threads().stream().filter(row -> row.subject().equals(subject) && row.threads() == threads)
                .findFirst();
    }

    private static Optional<RedisBatching.Burst> goalBurst(RedisBatching.Results batching, String subject,
                                                            boolean hotKey) {
        return batching.bursts().stream().filter(burst -> burst.subject().equals(subject)
                && burst.decisions() == GOAL_BURST && (burst.keys() == 1) == hotKey).findFirst();
    }

    private static void localSyncOvershoot(Markdown md, List<LocalSyncOvershoot.Row> rows) {
        md.section("## Counting locally: admitted per window against the bound");
        if (rows.isEmpty()) {
            md.line("Not run: no `local-sync.json` in the results.");
            return;
        }
        LocalSyncOvershoot.Row first = rows.get(0);
        md.line(String.format(Locale.ROOT, "`LocalSyncOvershoot`: %d instances (each its own Redisson client and"
                        + " store) call one hot key from %d threads each, as fast as they can, through a `redis-server`"
                        + " of its own; calls admitted are counted per window by the time they were decided (the"
                        + " clock Redis reads: this machine's), for the windows the run covered whole. The bound is"
                        + " what `LocalSyncRateLimitStore` states: limit + (instances − 1) × ceil(limit × interval /"
                        + " window).", first.instances(), first.threads()));
        md.line();
        md.table(List.of("", "algorithm", "limit", "window", "bound", "admitted per window", "most ÷ limit"), 2,
                rows.stream().map(row -> List.of(row.subject(), row.algorithm().name(), whole(row.limit()),
                        seconds(row.windowMillis() / 1000.0), whole(row.bound()),
                        row.admitted().stream().map(ResultsReport::whole).collect(Collectors.joining(", ")),
                        row.admitted().isEmpty() ? "—" : ratio(row.admitted().stream().mapToLong(Long::longValue).max()
                                .orElse(0) / (double) row.limit()))).toList());
    }

    private static void waitingCallers(Markdown md, List<WaitingCallers.Row> rows) {
        md.section("## Waiting callers: store calls per permit");
        if (rows.isEmpty()) {
            md.line("Not run: no `waiting.json` in the results.");
            return;
        }
        WaitingCallers.Row first = rows.get(0);
        md.line(String.format(Locale.ROOT, "`WaitingCallers`: on one key whose limit is spent, %d blocked threads and"
                        + " %d asynchronous callers (asking one after another from one thread) each wait for one"
                        + " permit (`onLimit = WAIT`), at %d permits a second; every store call is counted. Token"
                        + " buckets are reserved: the store takes the permit, due later, in the call that decides it."
                        + " Window algorithms, and a store that does not reserve, line callers up in the limiter.",
                first.threads(), first.async(), first.ratePerSecond()));
        md.line();
        md.table(List.of("", "algorithm", "served", "store calls", "a permit", "async served out of order",
                        "seconds", "ideal"), 2,
                rows.stream().map(row -> List.of(row.subject(), row.algorithm().name(), whole(row.admitted()),
                        whole(row.storeCalls()), hundredths(row.callsPerPermit()), whole(row.outOfOrder()),
                        hundredths(row.seconds()), hundredths((row.threads() + row.async())
                                / (double) row.ratePerSecond()))).toList());
    }

    private static void memory(Markdown md, List<MemoryFootprint.Row> memory) {
        md.section("## Memory per key");
        if (memory.isEmpty()) {
            md.line("Not run: no `memory.json` in the results.");
            return;
        }
        List<MemoryFootprint.Row> jvm = memory.stream().filter(row -> row.where().equals("JVM")).toList();
        List<MemoryFootprint.Row> redis = memory.stream().filter(row -> row.where().equals("Redis")).toList();
        long keys = jvm.stream().mapToLong(MemoryFootprint.Row::keysKept).max().orElse(0);
        md.line(String.format(Locale.ROOT, "**In the JVM**: the heap in use after full collections, before and"
                + " after %,d keys had one call each, divided by the keys (limit 1,000 per hour, so that no state"
                + " expires meanwhile). The caller's key strings exist before and are not counted: every subject"
                + " holds them as they are (Sluice beside the limiter's name), and would count any string it made"
                + " of its own. Sluice: one `RateLimiter` on an"
                + " `InMemoryRateLimitStore` bounded at 2,000,000 keys. The others: a limiter per key in a"
                + " `ConcurrentHashMap`, the map counted. Fixed costs (the map's table; the store's frequency"
                + " sketch, sized to its bound) are spread over the keys. \"÷ best other\" divides by the smallest"
                + " of the others.",
                keys));
        md.line();
        double bestJvm = jvm.stream().filter(row -> !row.subject().startsWith("Sluice"))
                .mapToDouble(MemoryFootprint.Row::bytesPerKey).min().orElse(Double.NaN);
        md.table(List.of("", "bytes per key", "÷ best other", "keys kept"), 1, jvm.stream().map(row -> List.of(
                row.subject(), whole(row.bytesPerKey()),
                row.subject().startsWith("Sluice") ? ratio(row.bytesPerKey() / bestJvm) : "",
                String.format(Locale.ROOT, "%,d", row.keysKept()))).toList());
        md.line();
        md.line("**In Redis**: every key one decision for one key leaves on an empty server (limit 1,000 per hour),"
                + " their `MEMORY USAGE` summed; keys found with `SCAN`.");
        md.line();
        double bestRedis = redis.stream().filter(row -> !row.subject().startsWith("Sluice"))
                .mapToDouble(MemoryFootprint.Row::bytesPerKey).min().orElse(Double.NaN);
        md.table(List.of("", "Redis keys", "bytes", "÷ best other"), 1, redis.stream().map(row -> List.of(
                row.subject(), String.valueOf(row.keysKept()), whole(row.bytesPerKey()),
                row.subject().startsWith("Sluice") ? ratio(row.bytesPerKey() / bestRedis) : "")).toList());
    }

    /**
     * One JMH result, with the settings of its run.
     *
     * @param benchmark             {@code Class.method}, plus {@code :ALGORITHM} for Sluice's decisions
     * @param keys                  the {@code count} parameter
     * @param threads               threads calling
     * @param score                 ns per call, the median of the forks' averages
     * @param lowest                the lowest fork's average
     * @param highest               the highest fork's average
     * @param bytes                 bytes allocated per call
     * @param forks                 JVMs the benchmark ran in
     * @param warmupIterations      warm-up iterations per fork
     * @param warmupTime            the length of each, as JMH writes it ({@code 1 s})
     * @param measurementIterations measured iterations per fork
     * @param measurementTime       the length of each
     * @param jmhVersion            JMH's version
     */
    private record JmhResult(String benchmark, int keys, int threads, double score, double lowest, double highest,
                             double bytes,
                             int forks, int warmupIterations, String warmupTime, int measurementIterations,
                             String measurementTime, String jmhVersion) {
    }

    private static List<JmhResult> readJmh(Path results) throws IOException {
        if (!Files.isDirectory(results)) {
            return List.of();
        }
        List<JmhResult> all = new ArrayList<>();
        try (Stream<Path> files = Files.list(results)) {
            List<Path> jmhFiles = files.filter(file -> file.getFileName().toString().matches("jmh-.*\\.json"))
                    .sorted().toList();
            for (Path file : jmhFiles) {
                for (JsonNode run : JSON.readTree(file.toFile())) {
                    String benchmark = run.get("benchmark").asText().replace("dev.sluice.benchmarks.", "");
                    JsonNode params = run.path("params");
                    if (params.has("algorithm")) {
                        benchmark += ":" + params.get("algorithm").asText();
                    }
                    if (params.has("keys")) {
                        benchmark += ":" + params.get("keys").asText();
                    }
                    double[] forkAverages = forkAverages(run.get("primaryMetric").get("rawData"));
                    all.add(new JmhResult(benchmark, params.path("count").asInt(), run.get("threads").asInt(),
                            median(forkAverages), forkAverages[0], forkAverages[forkAverages.length - 1],
                            number(run.path("secondaryMetrics").path("gc.alloc.rate.norm").path("score")),
                            run.get("forks").asInt(), run.get("warmupIterations").asInt(),
                            run.get("warmupTime").asText(), run.get("measurementIterations").asInt(),
                            run.get("measurementTime").asText(), run.get("jmhVersion").asText()));
                }
            }
        }
        return all;
    }

    /** Each fork's average of its measured iterations, from JMH's raw data, in ascending order. */
    private static double[] forkAverages(JsonNode rawData) {
        double[] averages = new double[rawData.size()];
        for (int fork = 0; fork < averages.length; fork++) {
            double sum = 0;
            for (JsonNode iteration : rawData.get(fork)) {
                sum += iteration.asDouble();
            }
            averages[fork] = sum / rawData.get(fork).size();
        }
        Arrays.sort(averages);
        return averages;
    }

    /** The median of values in ascending order. */
    private static double median(double[] sorted) {
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    /** A JMH time: the median of the forks, and their range when there are several. */
    private static String time(JmhResult result) {
        return nanos(result.score()) + (result.forks() > 1
                ? " (" + nanos(result.lowest()) + "–" + nanos(result.highest()) + ")" : "");
    }

    /** A number of JMH's JSON, which writes what it could not compute as the string {@code "NaN"}. */
    private static double number(JsonNode node) {
        return node.isNumber() ? node.asDouble() : Double.NaN;
    }

    private static Optional<JmhResult> find(List<JmhResult> jmh, String benchmark, int keys, int threads) {
        return jmh.stream().filter(r -> r.benchmark().equals(benchmark) && r.keys() == keys && r.threads() == threads)
                .findFirst();
    }

    private static Map<String, String> labels(String... benchmarksAndLabels) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (int i = 0; i < benchmarksAndLabels.length; i += 2) {
            labels.put(benchmarksAndLabels[i], benchmarksAndLabels[i + 1]);
        }
        return Collections.unmodifiableMap(labels);
    }

    private static Properties versions() {
        Properties versions = new Properties();
        try (InputStream in = ResultsReport.class.getResourceAsStream("versions.properties")) {
            versions.load(Objects.requireNonNull(in, "versions.properties"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return versions;
    }

    /** The value of the first {@code name: value} line of a file of {@code /proc}. */
    private static Optional<String> procField(String file, String name) {
        try (Stream<String> lines = Files.lines(Path.of(file))) {
            return lines.filter(line -> line.startsWith(name)).findFirst()
                    .map(line -> line.substring(line.indexOf(':') + 1).strip());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String nanos(double nanos) {
        return String.format(Locale.ROOT, nanos < 100 ? "%.1f" : "%,.0f", nanos);
    }

    private static String whole(double value) {
        return Double.isNaN(value) ? "—" : String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String tenths(double value) {
        return String.format(Locale.ROOT, "%,.1f", value);
    }

    private static String hundredths(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    /** Milliseconds to three places, or a dash for none. */
    static String millis(@Nullable Double value) {
        return value == null ? "—" : String.format(Locale.ROOT, "%.3f", value);
    }

    private static String ratio(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private static String seconds(double value) {
        return String.format(Locale.ROOT, "%s s", value == Math.rint(value) ? String.valueOf((long) value)
                : String.valueOf(value));
    }

    /** A Markdown document being written. */
    private static final class Markdown {

        private final StringBuilder text = new StringBuilder();

        void line(String line) {
            text.append(line).append('\n');
        }

        void line() {
            text.append('\n');
        }

        void section(String heading) {
            line();
            line(heading);
            line();
        }

        /** A table whose first {@code textColumns} columns are text, aligned left, and the rest figures. */
        void table(List<String> header, int textColumns, List<List<String>> rows) {
            line("| " + String.join(" | ", header) + " |");
            StringBuilder rule = new StringBuilder("|");
            for (int i = 0; i < header.size(); i++) {
                rule.append(i < textColumns ? " --- |" : " ---: |");
            }
            line(rule.toString());
            for (List<String> row : rows) {
                line("| " + String.join(" | ", row) + " |");
            }
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }
}
