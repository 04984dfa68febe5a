package dev.sluice.redisson;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.codec.StringCodec;

/**
 * The Redis store: every decision is one {@code EVALSHA} of a Lua script that decides all tiers
 * of the key atomically, for every algorithm, so any number of application instances share one
 * limit exactly. It works with whatever the given {@link RedissonClient} connects to: a single
 * server, sentinel, replicated or cluster.
 *
 * <pre class="code">
 * RateLimitStore store = RedissonRateLimitStore.builder(redisson).build();
 * </pre>
 *
 * <p><strong>Keys.</strong> The tiers of store key {@code k} (the limiter name and the caller's
 * key) live at {@code sluice:{k}:<algorithm><window ms>}, and the key's own state (the latest
 * time it saw, so that time never runs backwards for it, and the end of a block) at
 * {@code sluice:{k}:meta}: the hash tag puts all of them in one cluster slot. A {@code k} that
 * is empty, longer than 128 characters, contains <code>{</code> or <code>}</code>, or starts
 * with {@code #}, is replaced by {@code #} and its SHA-256. Every key written expires once its state
 * no longer matters: at the end of its window, refill or block.
 *
 * <p><strong>Time.</strong> By default the script reads the Redis server's {@code TIME}, so
 * instances with skewed clocks agree. With {@link Builder#clock(InstantSource)} the client's
 * time is sent instead (tests use this to move time). Decisions follow that time, never key
 * expiry.
 *
 * <p><strong>Scripts.</strong> The script is run by its SHA-1; when the server does not know it
 * (after a restart, a failover or {@code SCRIPT FLUSH}), it is loaded and the call repeated,
 * without the caller noticing.
 */
public final class RedissonRateLimitStore implements RateLimitStore {

    static final String SCRIPT = script("decide.lua");
    static final String SCRIPT_SHA = sha1(SCRIPT);
    private static final int MAX_RAW_KEY_LENGTH = 128;

    private final RScript scripts;
    private final String keyPrefix;
    private final @Nullable InstantSource clock;
    private final Executor executor;
    private final String instanceId = UUID.randomUUID().toString();
    private final AtomicLong calls = new AtomicLong();

    private RedissonRateLimitStore(Builder builder) {
        this.scripts = builder.client.getScript(StringCodec.INSTANCE);
        this.keyPrefix = builder.keyPrefix;
        this.clock = builder.clock;
        this.executor = builder.executor;
    }

    /**
     * Starts a store definition.
     *
     * @param client the Redisson client to run scripts with; its codec does not matter
     * @return a builder
     */
    public static Builder builder(RedissonClient client) {
        return new Builder(client);
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        RateLimitStore.check(this, key, tiers, cost);
        Call call = call(key, tiers, cost);
        List<Object> reply;
        try {
            reply = evalSha(call);
        } catch (RedisNoScriptException e) {
            scripts.scriptLoad(SCRIPT);
            reply = evalSha(call);
        }
        return decision(reply);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        Call call;
        try {
            RateLimitStore.check(this, key, tiers, cost);
            call = call(key, tiers, cost);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return completeOn(executor, evalShaAsync(call)
                .exceptionallyCompose(failure -> unwrap(failure) instanceof RedisNoScriptException
                        ? scripts.scriptLoadAsync(SCRIPT).thenCompose(sha -> evalShaAsync(call))
                        : CompletableFuture.failedFuture(unwrap(failure)))
                .thenApply(RedissonRateLimitStore::decision));
    }

    /**
     * The same outcome, completed on {@code executor}: Redisson completes its futures on its
     * netty threads, where the caller's continuation (a limited method's body) must not run.
     */
    static <T> CompletableFuture<T> completeOn(Executor executor, CompletableFuture<T> stage) {
        CompletableFuture<T> handedOver = new CompletableFuture<>();
        stage.whenCompleteAsync((value, failure) -> {
            if (failure == null) {
                handedOver.complete(value);
            } else {
                handedOver.completeExceptionally(unwrap(failure));
            }
        }, executor);
        return handedOver;
    }

    private List<Object> evalSha(Call call) {
        return scripts.evalSha(call.keys.get(0).toString(), RScript.Mode.READ_WRITE, SCRIPT_SHA,
                RScript.ReturnType.LIST, call.keys, call.arguments);
    }

    private CompletableFuture<List<Object>> evalShaAsync(Call call) {
        return scripts.<List<Object>>evalShaAsync(call.keys.get(0).toString(), RScript.Mode.READ_WRITE, SCRIPT_SHA,
                RScript.ReturnType.LIST, call.keys, call.arguments).toCompletableFuture();
    }

    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** The keys and arguments of one script call. */
    private record Call(List<Object> keys, Object[] arguments) {
    }

    private Call call(String key, List<Tier> tiers, long cost) {
        String base = keyPrefix + ":{" + hashTag(key) + "}:";
        List<Object> keys = new ArrayList<>(tiers.size() + 1);
        keys.add(base + "meta");
        Object[] arguments = new Object[3 + 5 * tiers.size()];
        arguments[0] = clock == null ? "" : clock.millis();
        arguments[1] = cost;
        arguments[2] = instanceId + ':' + calls.incrementAndGet();
        int i = 3;
        for (Tier tier : tiers) {
            String algorithm = code(tier);
            keys.add(base + algorithm + tier.windowMillis());
            arguments[i++] = algorithm;
            arguments[i++] = tier.limit();
            arguments[i++] = tier.windowMillis();
            arguments[i++] = tier.countRejected() ? 1 : 0;
            arguments[i++] = tier.blockFor().toMillis();
        }
        return new Call(keys, arguments);
    }

    /** The store key as it appears between braces: itself, or its hash when it cannot be used raw. */
    static String hashTag(String key) {
        if (!key.isEmpty() && key.length() <= MAX_RAW_KEY_LENGTH && key.indexOf('{') < 0 && key.indexOf('}') < 0
                && !key.startsWith("#")) {
            return key;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return "#" + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A key prefix: not blank, and free of braces, which would move the hash tag. */
    static String checkKeyPrefix(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        if (keyPrefix.isBlank() || keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix must be non-blank and free of braces, was '" + keyPrefix + "'");
        }
        return keyPrefix;
    }

    private static String code(Tier tier) {
        return switch (tier.algorithm()) {
            case FIXED_WINDOW -> "fw";
            case SLIDING_WINDOW -> "sw";
            case SLIDING_LOG -> "sl";
            case TOKEN_BUCKET -> "tb";
        };
    }

    private static Decision decision(List<Object> reply) {
        return new Decision(((Long) reply.get(0)) == 1, (Long) reply.get(1), (Long) reply.get(2),
                Duration.ofMillis((Long) reply.get(3)), Duration.ofMillis((Long) reply.get(4)));
    }

    private static String script(String name) {
        try (InputStream in = Objects.requireNonNull(RedissonRateLimitStore.class.getResourceAsStream(name), name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Configures a {@link RedissonRateLimitStore}. Not thread-safe; build once. */
    public static final class Builder {

        private final RedissonClient client;
        private String keyPrefix = "sluice";
        private @Nullable InstantSource clock;
        private Executor executor = ForkJoinPool.commonPool();

        private Builder(RedissonClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * The first part of every key, so that several applications can share a Redis.
         *
         * @param keyPrefix not blank, without braces; default {@code "sluice"}
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = checkKeyPrefix(keyPrefix);
            return this;
        }

        /**
         * Decide with the client's time instead of the Redis server's. Every instance sharing
         * a limit must then keep its clock in step with the others.
         *
         * @param clock the time source; by default the server's {@code TIME} is used
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Where asynchronous decisions complete, and so where the caller's continuation runs.
         *
         * @param executor default the common fork-join pool
         * @return this builder
         */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Builds the store. Nothing is sent to Redis until the first decision.
         *
         * @return the store
         */
        public RedissonRateLimitStore build() {
            return new RedissonRateLimitStore(this);
        }
    }
}
