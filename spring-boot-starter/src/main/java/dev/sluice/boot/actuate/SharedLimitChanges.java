package dev.sluice.boot.actuate;

import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.springframework.context.SmartLifecycle;

/**
 * Live changes of limits that every instance sharing the Redis store makes. A change is recorded
 * in one Redis hash, field the limiter, value the limiter's whole limits with the change's
 * version (from one counter, so that of two changes made at once the later version wins whole,
 * never half of each), its author and time. Publishing it notifies every instance, which reads
 * the hash and applies what is newer than what it applied; each instance also reads the hash
 * every second, for notices it missed, and as it starts. Taking a change back removes it, and
 * every instance returns to the limits it was configured with. A value that cannot be read, or
 * whose version is ahead of the counter, is left alone with a warning, never half applied.
 *
 * <p>Versions count within one history of the changes, named by a random epoch that Redis keeps
 * beside them. Redis restarted without persistence, flushed, or failed over to a replica that
 * lagged starts the counter again: the first change recorded then starts a new epoch (as does one
 * that finds the counter unreadable), and an instance that reads an epoch other than the one it
 * followed takes what Redis holds as it is, whatever the versions: it applies every change
 * recorded and takes back every other, its own included.
 *
 * <p>A limiter of one instance that pauses a key in the store (a client rule obeying a partner's
 * {@code Retry-After}) tells the others on a second channel, so that their callers holding
 * permits reserved before the pause ask again and wait through it.
 *
 * <p>Public for the core auto-configuration, in its own package, which makes it for the Redis store.
 */
public final class SharedLimitChanges extends LimitChanges implements SmartLifecycle {

    private static final System.Logger LOGGER = System.getLogger(SharedLimitChanges.class.getName());

    /** How often every instance reads the changes, whatever it was told. */
    static final Duration POLL_INTERVAL = Duration.ofSeconds(1);

    /** The longest a read or write of the changes may take: they are few, and made by operators. */
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    /**
     * Records (ARGV[2] not empty) or removes the change of limiter ARGV[1] under the next version,
     * and tells every instance on channel ARGV[3]; returns the version. Without an epoch (KEYS[3]),
     * or with a counter that is not a number, the history starts again under the epoch ARGV[4].
     */
    private static final String PUBLISH = """
            local counter = redis.call('GET', KEYS[2])
            if not redis.call('GET', KEYS[3]) or (counter and not tonumber(counter)) then
                if counter and not tonumber(counter) then redis.call('DEL', KEYS[2]) end
                redis.call('SET', KEYS[3], ARGV[4])
            end
            local version = redis.call('INCR', KEYS[2])
            if ARGV[2] == '' then
                redis.call('HDEL', KEYS[1], ARGV[1])
            else
                redis.call('HSET', KEYS[1], ARGV[1], version .. '\\n' .. ARGV[2])
            end
            redis.call('PUBLISH', ARGV[3], ARGV[1])
            return version
            """;

    /** The version of the changes, their epoch, and the changes, read together. */
    private static final String READ = """
            return {redis.call('GET', KEYS[2]) or '0', redis.call('GET', KEYS[3]) or '',
                    redis.call('HGETALL', KEYS[1])}
            """;

    private final RedissonClient redis;
    private final RateLimiterRegistry registry;
    private final String changes;
    private final String versions;
    private final String epochs;
    private final String channel;
    private final String pauses;
    /** The epoch of the history this instance follows; {@code null} before its first read. */
    private @Nullable String followedEpoch;
    private final ScheduledExecutorService reader = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "sluice-limit-changes");
        thread.setDaemon(true);
        return thread;
    });
    private final Set<String> unreadable = ConcurrentHashMap.newKeySet();
    private volatile boolean warnedUnreachable;
    /** How many times this instance has recorded a change or taken one back. */
    private volatile long published;
    private final Duration startUpWait;
    private volatile @Nullable Integer listener;
    private volatile @Nullable Integer pauseListener;
    private volatile boolean running;

    /**
     * Changes shared through one Redis.
     *
     * @param redis     the client of the Redis store
     * @param registry  the limiters to change
     * @param keyPrefix the store's key prefix, which the changes' keys start with
     * @param warmUp    the longest start-up waits for Redis ({@code sluice.redis.warm-up-timeout})
     */
    public SharedLimitChanges(RedissonClient redis, RateLimiterRegistry registry, String keyPrefix, Duration warmUp) {
        this.redis = redis;
        this.registry = registry;
        // One hash tag: both keys in one slot of a Redis Cluster, as the script needs.
        this.changes = keyPrefix + ":{limit-changes}";
        this.versions = keyPrefix + ":{limit-changes}:version";
        this.epochs = keyPrefix + ":{limit-changes}:epoch";
        this.channel = keyPrefix + ":limit-changes";
        this.pauses = keyPrefix + ":pauses";
        this.startUpWait = warmUp.compareTo(TIMEOUT) < 0 ? warmUp : TIMEOUT;
    }

    /**
     * Applies the changes recorded as the application starts, before its web server takes
     * requests (waiting for Redis no longer than the warm-up allows), then follows them.
     */
    @Override
    public void start() {
        Future<?> first = reader.submit(this::catchUp);
        try {
            first.get(startUpWait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Redis is slow or down: the reads every second go on trying.
        }
        long every = POLL_INTERVAL.toMillis();
        reader.scheduleWithFixedDelay(this::catchUp, every, every, TimeUnit.MILLISECONDS);
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        reader.shutdownNow();
        try {
            // A read under way ends before the client it reads through is shut down.
            reader.awaitTermination(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Integer subscribed = listener;
        Integer subscribedToPauses = pauseListener;
        if (!redis.isShutdown()) {
            if (subscribed != null) {
                redis.getTopic(channel, StringCodec.INSTANCE).removeListenerAsync(subscribed);
            }
            if (subscribedToPauses != null) {
                redis.getTopic(pauses, StringCodec.INSTANCE).removeListenerAsync(subscribedToPauses);
            }
        }
    }

    /**
     * Tells the other instances, without waiting: the pause itself is in the store, and a
     * notice lost while Redis is down leaves their reserved callers going ahead as before.
     */
    @Override
    public void paused(String limiter) {
        try {
            redis.getTopic(pauses, StringCodec.INSTANCE).publishAsync(limiter);
        } catch (RuntimeException e) {
            // Redis is down or the application is stopping.
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Before the web server, which starts in a later phase. */
    @Override
    public int getPhase() {
        return 0;
    }

    /** On a notice: reads the changes on the reader's thread, unless the application is stopping. */
    private void readSoon() {
        try {
            reader.execute(this::read);
        } catch (RejectedExecutionException e) {
            // Stopped.
        }
    }

    /** Subscribes to the notices unless it has, then reads the changes. */
    private void catchUp() {
        try {
            if (listener == null) {
                redis.getTopic(channel, StringCodec.INSTANCE)
                        .addListenerAsync(String.class, (ignored, limiter) -> readSoon())
                        .thenAccept(id -> listener = id);
            }
            if (pauseListener == null) {
                redis.getTopic(pauses, StringCodec.INSTANCE)
                        .addListenerAsync(String.class, (ignored, limiter) -> registry.find(limiter)
                                .ifPresent(RateLimiter::pausedElsewhere))
                        .thenAccept(id -> pauseListener = id);
            }
        } catch (RuntimeException e) {
            // Redis is down; the next read tries again.
        }
        read();
    }

    @Override
    synchronized void change(RateLimiter limiter, Limits limits, @Nullable String by, Instant at) {
        Optional<Change> before = inForce(limiter.name());
        // Applied here first: limits this instance's store cannot take are refused before any
        // other instance hears of them.
        super.change(limiter, limits, by, at);
        long version;
        try {
            version = publish(limiter.name(), encode(by, at, limits));
        } catch (StoreUnavailableException e) {
            before.ifPresentOrElse(change -> apply(limiter, change), () -> undo(limiter));
            throw e;
        }
        apply(limiter, new Change(version, by, at, limits));
    }

    @Override
    synchronized boolean revert(RateLimiter limiter) {
        publish(limiter.name(), "");
        return undo(limiter);
    }

    /** Applies every change newer than this instance's, and takes back those removed. */
    void read() {
        Snapshot snapshot = snapshot();
        if (snapshot != null) {
            follow(snapshot);
        }
    }

    /** The changes as Redis holds them now, or null when it does not answer. */
    @Nullable Snapshot snapshot() {
        long publishedBefore = published;
        List<Object> read;
        try {
            // Read from the master, where the changes are written: a replica may not have the latest yet.
            read = script().<List<Object>>evalAsync(changes, RScript.Mode.READ_WRITE, READ, RScript.ReturnType.LIST,
                    List.of(changes, versions, epochs)).toCompletableFuture().get(TIMEOUT.toMillis(),
                    TimeUnit.MILLISECONDS);
            warnedUnreachable = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (Exception e) {
            if (!warnedUnreachable) {
                warnedUnreachable = true;
                LOGGER.log(System.Logger.Level.WARNING, "Could not read the limit changes shared through Redis; the"
                        + " limiters keep the limits they have until it answers: " + e);
            }
            return null;
        }
        Map<String, String> recorded = new LinkedHashMap<>();
        List<?> fields = (List<?>) read.get(2);
        for (int i = 0; i + 1 < fields.size(); i += 2) {
            recorded.put(String.valueOf(fields.get(i)), String.valueOf(fields.get(i + 1)));
        }
        long asOf;
        try {
            asOf = Long.parseLong(String.valueOf(read.get(0)));
        } catch (NumberFormatException e) {
            // Not a counter this class writes: no recorded change is trusted until the next change starts a new epoch.
            asOf = 0;
        }
        return new Snapshot(String.valueOf(read.get(1)), asOf, recorded, publishedBefore);
    }

    /**
     * Brings every limiter in line with a snapshot, unless this instance has changed or taken back
     * a change since it was read: then it is out of date, and the notice of that change brings a
     * newer one.
     */
    synchronized void follow(Snapshot snapshot) {
        if (snapshot.publishedBefore() != published) {
            return;
        }
        boolean anotherHistory = !snapshot.epoch().equals(followedEpoch);
        if (anotherHistory && followedEpoch != null) {
            LOGGER.log(System.Logger.Level.INFO, "The limit changes shared through Redis were started again (Redis"
                    + " restarted, was flushed or failed over): every limiter takes the changes Redis holds now");
        }
        followedEpoch = snapshot.epoch();
        for (RateLimiter limiter : registry.limiters()) {
            String value = snapshot.recorded().get(limiter.name());
            try {
                Change recorded = value == null ? null : decode(value);
                if (recorded != null && recorded.version() > snapshot.asOf()) {
                    throw new IllegalArgumentException("version " + recorded.version() + " is ahead of the counter, "
                            + snapshot.asOf());
                }
                if (anotherHistory) {
                    takeAsItIs(limiter, recorded);
                } else {
                    follow(limiter, recorded, snapshot.asOf());
                }
                unreadable.remove(limiter.name());
            } catch (IllegalArgumentException e) {
                if (unreadable.add(limiter.name())) {
                    LOGGER.log(System.Logger.Level.WARNING, "Rate limiter '" + limiter.name() + "' keeps its limits:"
                            + " the change shared through Redis cannot apply: " + e.getMessage());
                }
            }
        }
    }

    /**
     * The changes as read at one moment.
     *
     * @param epoch           the history they belong to; empty when Redis holds none
     * @param asOf            the version of the changes then
     * @param recorded        each changed limiter's recorded value, by limiter name
     * @param publishedBefore how many changes this instance had recorded or taken back before the read
     */
    record Snapshot(String epoch, long asOf, Map<String, String> recorded, long publishedBefore) {
    }

    private RScript script() {
        return redis.getScript(StringCodec.INSTANCE);
    }

    /** Records a change, or its removal, and notifies every instance: the version it was given. */
    private long publish(String limiter, String value) {
        try {
            return script().<Long>evalAsync(changes, RScript.Mode.READ_WRITE, PUBLISH, RScript.ReturnType.LONG,
                    List.of(changes, versions, epochs), limiter, value, channel, UUID.randomUUID().toString())
                    .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("Interrupted while sharing the change of limiter '" + limiter + "'",
                    TIMEOUT);
        } catch (Exception e) {
            throw new StoreUnavailableException("Could not share the change of limiter '" + limiter
                    + "' through Redis: " + e, TIMEOUT);
        } finally {
            // Even when it failed: Redis may have recorded it all the same. Always under this instance's lock.
            published++;
        }
    }

    /** The value recorded for a change, without its version, which the script puts first. */
    static String encode(@Nullable String by, Instant at, Limits limits) {
        Properties values = new Properties();
        values.setProperty("at", at.toString());
        if (by != null) {
            values.setProperty("by", by);
        }
        values.setProperty("tiers", encode(limits.tiers()));
        limits.plans().forEach((plan, tiers) -> values.setProperty("plan." + plan, encode(tiers)));
        StringWriter text = new StringWriter();
        try {
            values.store(text, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // Without the date comment Properties writes first, which says nothing the value needs.
        return text.toString().lines().filter(line -> !line.startsWith("#")).collect(Collectors.joining("\n"));
    }

    private static String encode(List<Tier> tiers) {
        return tiers.stream().map(tier -> tier.limit() + " " + tier.window() + " " + tier.algorithm() + " "
                + tier.countRejected() + " " + tier.blockFor()).collect(Collectors.joining(";"));
    }

    /**
     * A change as recorded, checked before it is trusted.
     *
     * @throws IllegalArgumentException when the value is not one this class writes
     */
    static Change decode(String value) {
        int newline = value.indexOf('\n');
        if (newline < 0) {
            throw new IllegalArgumentException("no version");
        }
        Properties values = new Properties();
        try {
            values.load(new StringReader(value.substring(newline + 1)));
            long version = Long.parseLong(value.substring(0, newline));
            Map<String, List<Tier>> plans = new LinkedHashMap<>();
            for (String name : values.stringPropertyNames()) {
                if (name.startsWith("plan.")) {
                    plans.put(name.substring("plan.".length()), tiers(values.getProperty(name)));
                }
            }
            String tiers = values.getProperty("tiers");
            String at = values.getProperty("at");
            if (tiers == null || at == null) {
                throw new IllegalArgumentException("no tiers or no time");
            }
            return new Change(version, values.getProperty("by"), Instant.parse(at), new Limits(tiers(tiers), plans));
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("unreadable (" + e.getMessage() + ")", e);
        }
    }

    private static List<Tier> tiers(String text) {
        List<Tier> tiers = new ArrayList<>();
        for (String tier : text.split(";")) {
            String[] parts = tier.split(" ");
            if (parts.length != 5) {
                throw new IllegalArgumentException("a tier of " + parts.length + " parts");
            }
            tiers.add(new Tier(Long.parseLong(parts[0]), Duration.parse(parts[1]), Algorithm.valueOf(parts[2]),
                    Boolean.parseBoolean(parts[3]), Duration.parse(parts[4])));
        }
        return tiers;
    }
}
