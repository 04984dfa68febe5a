package dev.sluice.redisson.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} process on a free loopback port, started by the test and stopped
 * with it, so that tests can kill, restart and flush it. Nothing is written to disk but a
 * temporary directory for the log and, for cluster nodes, the node configuration.
 */
public final class RedisServer implements AutoCloseable {

    private static final Duration STARTUP = Duration.ofSeconds(20);

    private final int port;
    private final List<String> arguments;
    private final Path directory;
    private Process process;

    /**
     * A server of arguments {@code leading}, the standard options, then {@code options}.
     */
    private RedisServer(int port, List<String> leading, List<String> options) {
        this.port = port;
        try {
            this.directory = Files.createTempDirectory("sluice-redis-" + port + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> all = new ArrayList<>(leading);
        all.addAll(List.of("--port", String.valueOf(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", directory.toString(), "--logfile", "redis.log", "--enable-debug-command", "local"));
        all.addAll(options);
        this.arguments = List.copyOf(all);
        Runtime.getRuntime().addShutdownHook(new Thread(this::kill));
    }

    /**
     * Starts a standalone server.
     *
     * @return the running server
     */
    public static RedisServer start() {
        return start(List.of());
    }

    /**
     * Starts a standalone server with options of the test's own.
     *
     * @param options configuration options, as on the command line: {@code --maxmemory 4mb}
     * @return the running server
     */
    public static RedisServer start(List<String> options) {
        RedisServer server = new RedisServer(freePort(), List.of(), options);
        server.launch();
        return server;
    }

    /**
     * Starts a Redis Sentinel that monitors a master, alone enough to agree it failed.
     *
     * @param master     the master
     * @param masterName the name the sentinel knows it by
     * @return the running sentinel
     */
    public static RedisServer startSentinel(RedisServer master, String masterName) {
        // The sentinel rewrites its configuration file, so it lives in the server's own directory.
        RedisServer sentinel = new RedisServer(freePort(), List.of("sentinel.conf", "--sentinel"), List.of());
        try {
            Files.writeString(sentinel.directory.resolve("sentinel.conf"), "sentinel monitor " + masterName
                    + " 127.0.0.1 " + master.port() + " 1\nsentinel down-after-milliseconds " + masterName + " 1000\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        sentinel.launch();
        return sentinel;
    }

    /**
     * Starts a node with cluster mode on, not yet part of a cluster.
     *
     * @param nodeTimeout how long the cluster takes a silent node for failed
     */
    static RedisServer startClusterNode(Duration nodeTimeout) {
        int port = freePort();
        RedisServer server = new RedisServer(port, List.of(), List.of("--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", String.valueOf(nodeTimeout.toMillis()),
                "--cluster-port", String.valueOf(freePort())));
        server.launch();
        return server;
    }

    private void launch() {
        List<String> command = new ArrayList<>(List.of(executable("redis-server")));
        command.addAll(arguments);
        try {
            process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
                    .redirectOutput(directory.resolve("stdout.log").toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + command, e);
        }
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (!"PONG".equals(tryCli("PING"))) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server on port " + port + " did not start; its log:\n" + log());
            }
            waitBriefly();
        }
        // Another process could have taken the free port first: make sure the answer is ours.
        if (!process.isAlive() || !cli("INFO", "server").contains("process_id:" + process.pid())) {
            kill();
            throw new IllegalStateException("port " + port + " is taken by another process; run the tests again");
        }
    }

    /**
     * The port it listens on.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * Its address for Redisson.
     *
     * @return {@code redis://127.0.0.1:<port>}
     */
    public String address() {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * Runs a command with {@code redis-cli} against this server.
     *
     * @param arguments the command and its arguments
     * @return what redis-cli printed, trimmed
     */
    public String cli(String... arguments) {
        String output = tryCli(arguments);
        if (output == null) {
            throw new IllegalStateException("redis-cli " + String.join(" ", arguments) + " failed on port " + port);
        }
        return output;
    }

    /**
     * One figure of a tier's state as the store's scripts keep it, packed in the field {@code v}
     * of the tier's hash.
     *
     * @param key   the tier's Redis key
     * @param field {@code t} (the key's time), {@code b} (the end of its block), {@code s},
     *              {@code n} or {@code p} (the counters), or {@code e} (when the hash expires)
     * @return the figure, or 0 when the key holds no state
     */
    public long tierState(String key, String field) {
        return Long.parseLong(cli("EVAL", """
                local v = redis.call('HGET', KEYS[1], 'v')
                if not v then return 0 end
                local t, b, s, n, p, e = struct.unpack('<dddddd', v)
                return ({ t = t, b = b, s = s, n = n, p = p, e = e })[ARGV[1]]""", "1", key, field));
    }

    private String tryCli(String... arguments) {
        List<String> command = new ArrayList<>(List.of(executable("redis-cli"), "-p", String.valueOf(port)));
        command.addAll(List.of(arguments));
        return run(command);
    }

    static String run(List<String> command) {
        try {
            Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return cli.waitFor(30, TimeUnit.SECONDS) && cli.exitValue() == 0 ? output : null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The CPU time the server's main thread, where Redis runs commands, has had so far: how long
     * Redis worked, unlike its clock, which on a busy machine also runs while Redis waits for a
     * CPU. Read from Linux's {@code /proc/<pid>/schedstat}, which a running thread updates
     * at least once per scheduler tick.
     *
     * @return nanoseconds, or -1 where the system does not say
     */
    public long cpuNanos() {
        try {
            return Long.parseLong(Files.readString(Path.of("/proc", String.valueOf(process.pid()), "schedstat"))
                    .trim().split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The server's clock, from {@code TIME}.
     *
     * @return the server's current time
     */
    public Instant time() {
        String[] secondsAndMicros = cli("TIME").split("\\s+");
        return Instant.ofEpochSecond(Long.parseLong(secondsAndMicros[0]), Long.parseLong(secondsAndMicros[1]) * 1_000);
    }

    /** Removes every key. */
    public void flushAll() {
        cli("FLUSHALL");
    }

    /** Stops the server abruptly, as a crash would. */
    public void kill() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Starts the server again on the same port after {@link #kill()}, empty (it keeps nothing on disk). */
    public void restart() {
        kill();
        launch();
    }

    /** Stops the process where it stands ({@code SIGSTOP}), as a hung server would: connections stay open, nothing is answered. */
    public void suspend() {
        signal("STOP");
    }

    /** Lets a {@linkplain #suspend() suspended} process run again ({@code SIGCONT}). */
    public void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        if (run(List.of("kill", "-" + name, String.valueOf(process.pid()))) == null) {
            throw new IllegalStateException("could not send SIG" + name + " to " + this);
        }
    }

    /**
     * Whether the process is running.
     *
     * @return {@code false} once killed
     */
    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /**
     * The server's log so far.
     *
     * @return the log text, or a note that there is none
     */
    public String log() {
        try {
            Path log = directory.resolve("redis.log");
            return Files.exists(log) ? Files.readString(log) : Files.readString(directory.resolve("stdout.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        kill();
        try (var files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A temporary directory left behind is harmless.
        }
    }

    static String executable(String name) {
        for (String folder : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(folder, name);
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new IllegalStateException(name + " was not found on the PATH. The Redis tests start their own"
                + " redis-server processes: install Redis (Debian/Ubuntu: sudo apt-get install redis-server;"
                + " Fedora: sudo dnf install redis; macOS: brew install redis) and run the tests again.");
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Between two polls of a process; nothing here waits for a rate-limit window. */
    public static void waitBriefly() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "redis-server on port " + port;
    }
}
