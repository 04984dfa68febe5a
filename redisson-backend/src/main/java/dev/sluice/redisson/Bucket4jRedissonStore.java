package dev.sluice.redisson;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreUnavailableException;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketState;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.VerboseResult;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.redisson.Bucket4jRedisson;
import io.github.bucket4j.redis.redisson.cas.RedissonBasedProxyManager;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RKeys;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.ObjectParams;
import org.redisson.api.options.OptionalOptions;
import org.redisson.command.CommandAsyncExecutor;

/**
 * A Redis store made of distributed Bucket4j buckets, for applications that want Bucket4j's
 * semantics: the {@code TOKEN_BUCKET} tiers of a key become the bandwidths of one Bucket4j bucket
 * ({@code refillGreedy(limit, window)}), kept in Redis through Bucket4j's Redisson proxy manager
 * and removed ten minutes after the bucket has refilled, in real time.
 *
 * <pre class="code">
 * RateLimitStore store = Bucket4jRedissonStore.builder(redisson).build();
 * </pre>
 *
 * <p>Know its cost: Bucket4j's Redisson backend is compare-and-swap (a read, then a CAS script,
 * retried on conflict), so a hot key is much slower than with {@link RedissonRateLimitStore},
 * which is the default for good reason. It supports only {@code TOKEN_BUCKET} tiers without
 * {@code countRejected} or {@code blockFor}, with windows up to about 292 years and refilling at
 * most a token a nanosecond (what Bucket4j can hold), and decides with the clients' clocks
 * (Bucket4j sends the client's time with each request), so instances must keep their clocks in
 * step.
 * A bucket holds one set of tiers: calls bringing another set of tiers for the same key count
 * in another bucket. When a tier's limit changes, its bucket is reconfigured on the next call,
 * keeping the tokens already taken, as the other stores keep their counts: instances deployed
 * with different limits for one key never admit more than the larger limit between them.
 *
 * <p>Outages are handled as by {@link RedissonRateLimitStore}: a timeout on every decision, no
 * client retries, a circuit breaker, and no blocked callers while a lazily initialised client
 * connects. A compare-and-swap that succeeded but whose reply came after its caller gave up
 * stays counted, although the caller took the failure policy (Bucket4j's compare-and-swap has no
 * server-side deadline, and tokens given back after some refill could credit more than the call
 * took): the strict side. It is never counted twice. For the same reasons it cannot
 * {@linkplain #giveBack give back} the permits of a call: limiters that count calls by their
 * outcome need {@link RedissonRateLimitStore}.
 *
 * <p>Bucket4j's Redisson module reaches into Redisson's internals; this class is the only place
 * that depends on it.
 */
public final class Bucket4jRedissonStore implements RateLimitStore {

    private static final BigInteger MILLION = BigInteger.valueOf(1_000_000);
    /**
     * How long a bucket is kept past the time it takes to refill, counted by Redis in real time:
     * the clients' clocks may run slow or stand still (a test's), and a bucket gone before its
     * clock says it is full would start full again.
     */
    private static final Duration KEEP_AFTER_REFILL = Duration.ofMinutes(10);
    /** The longest window Bucket4j can hold, in nanoseconds of a {@code long}. */
    private static final Duration LONGEST_WINDOW = Duration.ofNanos(Long.MAX_VALUE);

    private final RedissonBasedProxyManager<String> buckets;
    private final RKeys redisKeys;
    private final String keyPrefix;
    private final @Nullable KeyHasher keyHasher;
    private final Executor executor;
    private final StoreCircuitBreaker breaker;
    private final RedisCalls redis;

    private Bucket4jRedissonStore(Builder builder) {
        this.redisKeys = builder.client.getKeys();
        this.keyPrefix = builder.keyPrefix;
        this.keyHasher = builder.keyHasher;
        this.executor = builder.executor;
        this.breaker = RedisCalls.breaker(builder.breaker, builder.timeout, Bucket4jRedissonStore.class.getSimpleName());
        this.redis = new RedisCalls(builder.timeout, breaker);
        // One attempt per command, whatever the client's retry settings: a retried compare-and-swap that
        // had succeeded would fail and make Bucket4j take the tokens a second time.
        CommandAsyncExecutor commands = ((Redisson) builder.client).getCommandExecutor()
                .copy((ObjectParams) OptionalOptions.defaults().timeout(builder.timeout).retryAttempts(0));
        this.buckets = Bucket4jRedisson.casBasedBuilder(commands)
                .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(KEEP_AFTER_REFILL))
                .clientClock(builder.timeMeter)
                .build();
    }

    /**
     * Starts a store definition.
     *
     * @param client the Redisson client; it must be created by {@code Redisson.create}, whose
     *               internals Bucket4j uses
     * @return a builder
     */
    public static Builder builder(RedissonClient client) {
        return new Builder(client);
    }

    @Override
    public Set<Algorithm> supportedAlgorithms() {
        return Set.of(Algorithm.TOKEN_BUCKET);
    }

    /**
     * Token buckets without {@code countRejected} or {@code blockFor} that Bucket4j can hold: it
     * counts time in nanoseconds of a {@code long} (windows up to about 292 years) and refills at
     * most a token a nanosecond.
     */
    @Override
    public boolean supports(Tier tier) {
        return tier.algorithm() == Algorithm.TOKEN_BUCKET && !tier.countRejected() && tier.blockFor().isZero()
                && tier.window().compareTo(LONGEST_WINDOW) <= 0 && tier.limit() <= tier.window().toNanos();
    }

    @Override
    public Optional<StoreCircuitBreaker> circuitBreaker() {
        return Optional.of(breaker);
    }

    @Override
    public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
        RateLimitStore.check(this, key, tiers, cost);
        Request request = request(key, tiers, cost);
        return redis.callAndWait(List.of(request.bucketKey), request::consume, unreceived -> { }, request::decision);
    }

    @Override
    public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
        try {
            RateLimitStore.check(this, key, tiers, cost);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        Request request = request(key, tiers, cost);
        return RedisCalls.completeOn(executor,
                redis.call(List.of(request.bucketKey), request::consume, unreceived -> { }, request::decision));
    }

    /**
     * Refuses: Bucket4j can add tokens to a bucket, but cannot tell how much of a call's cost it has
     * refilled since, so tokens added back could credit more than the call took.
     *
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException always, for a well-formed request
     */
    @Override
    public void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
        RateLimitStore.check(this, key, tiers, cost);
        throw new UnsupportedOperationException(Bucket4jRedissonStore.class.getSimpleName()
                + " cannot give back the permits of a call: Bucket4j's buckets cannot tell how much of a call's"
                + " cost they have refilled since. Count calls by their outcome with "
                + RedissonRateLimitStore.class.getSimpleName() + ", which can.");
    }

    /** Never: see {@link #giveBack}. */
    @Override
    public boolean givesBack(Tier tier) {
        return false;
    }

    /**
     * Refuses: a Bucket4j bucket holds tokens, not a block of its key.
     *
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException always, for a well-formed request
     */
    @Override
    public void pause(String key, List<Tier> tiers, Duration duration) {
        RateLimitStore.check(this, key, tiers, duration);
        throw new UnsupportedOperationException(Bucket4jRedissonStore.class.getSimpleName()
                + " cannot pause a key: Bucket4j's buckets hold no block. Pause keys with "
                + RedissonRateLimitStore.class.getSimpleName() + ", which can.");
    }

    /** Never: see {@link #pause}. */
    @Override
    public boolean pauses(Tier tier) {
        return false;
    }

    /**
     * Refuses, as it refuses to {@linkplain #giveBack give back}: recounting is for limiters of
     * calls to a partner, built on {@link RedissonRateLimitStore}.
     *
     * @throws IllegalArgumentException when the request is malformed
     * @throws UnsupportedOperationException always, for a well-formed request
     */
    @Override
    public void recount(String key, List<Tier> tiers, long cost, Duration ago) {
        RateLimitStore.check(this, key, tiers, cost);
        throw new UnsupportedOperationException(Bucket4jRedissonStore.class.getSimpleName()
                + " cannot recount a call. Recount calls with " + RedissonRateLimitStore.class.getSimpleName()
                + ", which can.");
    }

    /** Never: see {@link #recount}. */
    @Override
    public boolean recounts(Tier tier) {
        return false;
    }

    /**
     * Deletes the bucket of this set of tiers, within the store's timeout and through its circuit
     * breaker: its next call starts with a full bucket.
     */
    @Override
    public void reset(String key, List<Tier> tiers) {
        RateLimitStore.check(this, key, tiers);
        String bucketKey = bucketKey(key, byWindow(tiers));
        redis.callAndWait(List.of(bucketKey), () -> buckets.asAsync().removeProxy(bucketKey), removed -> { },
                removed -> removed);
    }

    /**
     * Deletes every key under this store's prefix, on every node, found with {@code SCAN}: for
     * tests only, never on a Redis serving production traffic: it scans the whole keyspace. It is
     * not part of {@link dev.sluice.RateLimitStore}, so that no code holding a store can call it
     * by mistake. It waits as long as the client's own timeouts allow, outside the circuit breaker.
     */
    public void clear() {
        redisKeys.deleteByPattern(RedissonRateLimitStore.keyPattern(keyPrefix));
    }

    /**
     * One call to a bucket. Tokens taken for a caller that gave up stay taken: giving them back
     * after some refill could credit more than the call took.
     */
    private record Request(String bucketKey, AsyncBucketProxy bucket, BucketConfiguration configuration,
                           List<Tier> bandwidths, long cost) {

        CompletableFuture<VerboseResult<ConsumptionProbe>> consume() {
            return bucket.asVerbose().tryConsumeAndReturnRemaining(cost).thenCompose(result -> {
                if (configuration.equals(result.getConfiguration())) {
                    return CompletableFuture.completedFuture(result);
                }
                // Decided under the tiers the bucket had: give back what it took, carry the tokens taken over
                // to the new tiers, then decide again.
                boolean consumed = result.getValue().isConsumed();
                long overGranted = overGranted(result.getConfiguration(), result.getState(), consumed ? cost : 0);
                CompletableFuture<Void> refunded = consumed
                        ? bucket.addTokens(cost) : CompletableFuture.completedFuture(null);
                return refunded
                        .thenCompose(done -> bucket.replaceConfiguration(configuration,
                                TokensInheritanceStrategy.ADDITIVE))
                        .thenCompose(replaced -> overGranted > 0
                                ? bucket.consumeIgnoringRateLimits(overGranted).thenApply(left -> null)
                                : CompletableFuture.completedFuture(null))
                        .thenCompose(kept -> bucket.asVerbose().tryConsumeAndReturnRemaining(cost));
            });
        }

        /**
         * The tokens Bucket4j's {@code ADDITIVE} replacement would grant beyond what the tiers'
         * tokens taken allow: a lowered capacity forgets tokens taken past it, which the next
         * raise would hand out again. A bucket takes them all from every bandwidth, so a tier
         * whose limit did not change may lose a few: the strict side.
         */
        private long overGranted(BucketConfiguration old, BucketState state, long refund) {
            long overGranted = 0;
            for (int i = 0; i < bandwidths.size(); i++) {
                long oldCapacity = old.getBandwidths()[i].getCapacity();
                long newCapacity = configuration.getBandwidths()[i].getCapacity();
                long available = state.getCurrentSize(i) + refund;
                long granted = Math.min(available, newCapacity) + Math.max(0, newCapacity - oldCapacity);
                long allowed = newCapacity - (oldCapacity - available);
                overGranted = Math.max(overGranted, granted - allowed);
            }
            return overGranted;
        }

        Decision decision(VerboseResult<ConsumptionProbe> result) {
            return Bucket4jRedissonStore.decision(result, bandwidths, cost);
        }
    }

    private Request request(String key, List<Tier> tiers, long cost) {
        List<Tier> bandwidths = byWindow(tiers);
        BucketConfiguration configuration = configuration(bandwidths);
        String bucketKey = bucketKey(key, bandwidths);
        AsyncBucketProxy bucket = buckets.asAsync().builder().build(bucketKey,
                () -> CompletableFuture.completedFuture(configuration));
        return new Request(bucketKey, bucket, configuration, bandwidths, cost);
    }

    /** The tiers in a fixed order, so that one set of tiers is one bucket whatever order it comes in. */
    private static List<Tier> byWindow(List<Tier> tiers) {
        return tiers.stream().sorted(Comparator.comparing(Tier::window)).toList();
    }

    private String bucketKey(String key, List<Tier> tiers) {
        return keyPrefix + ":{" + RedissonRateLimitStore.hashTag(key, keyHasher) + "}:bucket4j:"
                + tiers.stream().map(tier -> String.valueOf(tier.windowMillis())).collect(Collectors.joining(","));
    }

    private static BucketConfiguration configuration(List<Tier> tiers) {
        var configuration = BucketConfiguration.builder();
        for (Tier tier : tiers) {
            configuration.addLimit(Bandwidth.builder().capacity(tier.limit())
                    .refillGreedy(tier.limit(), tier.window()).build());
        }
        return configuration.build();
    }

    /**
     * The decision from the bucket's state after the operation. Bucket4j keeps, per bandwidth,
     * whole tokens and a remainder in token-nanoseconds; with both, each tier's wait and reset
     * are exact.
     */
    private static Decision decision(VerboseResult<ConsumptionProbe> result, List<Tier> tiers, long cost) {
        BucketState state = result.getState();
        boolean allowed = result.getValue().isConsumed();
        int binding = 0;
        long bindingWait = -1;
        long bindingLeft = Long.MAX_VALUE;
        long bindingReset = -1;
        for (int i = 0; i < tiers.size(); i++) {
            Tier tier = tiers.get(i);
            long left = Math.max(0, Math.min(tier.limit(), state.getCurrentSize(i)));
            long reset = millisUntil(tier, tier.limit(), state, i);
            long wait = allowed ? 0 : millisUntil(tier, cost, state, i);
            boolean binds = allowed
                    ? left < bindingLeft || (left == bindingLeft && reset > bindingReset)
                    : wait > bindingWait;
            if (binds) {
                binding = i;
                bindingWait = wait;
                bindingLeft = left;
                bindingReset = reset;
            }
        }
        return new Decision(allowed, tiers.get(binding).limit(), bindingLeft, Duration.ofMillis(bindingReset),
                Duration.ofMillis(allowed ? 0 : bindingWait), tiers.get(binding).window());
    }

    /** Milliseconds, rounded up, until bandwidth {@code i} holds {@code tokens}. */
    private static long millisUntil(Tier tier, long tokens, BucketState state, int i) {
        long missing = tokens - state.getCurrentSize(i);
        if (missing <= 0) {
            return 0;
        }
        // (missing × window in ns − remainder) / limit nanoseconds, in integers: limits reach 2^52.
        BigInteger nanos = BigInteger.valueOf(missing).multiply(BigInteger.valueOf(tier.window().toNanos()))
                .subtract(BigInteger.valueOf(state.getRoundingError(i)));
        BigInteger[] millis = nanos.divideAndRemainder(BigInteger.valueOf(tier.limit()).multiply(MILLION));
        return millis[0].longValueExact() + (millis[1].signum() > 0 ? 1 : 0);
    }

    /** Configures a {@link Bucket4jRedissonStore}. Not thread-safe; build once. */
    public static final class Builder {

        private final RedissonClient client;
        private String keyPrefix = "sluice";
        private TimeMeter timeMeter = TimeMeter.SYSTEM_MILLISECONDS;
        private Executor executor = RedisCalls.COMPLETIONS;
        private Duration timeout = Duration.ofSeconds(1);
        private @Nullable StoreCircuitBreaker breaker;
        private @Nullable KeyHasher keyHasher;

        private Builder(RedissonClient client) {
            this.client = Objects.requireNonNull(client, "client");
            if (!(client instanceof Redisson)) {
                throw new IllegalArgumentException("Bucket4j needs a client made by Redisson.create, not "
                        + client.getClass().getName());
            }
        }

        /**
         * The first part of every key.
         *
         * @param keyPrefix not blank, without braces; default {@code "sluice"}
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = RedissonRateLimitStore.checkKeyPrefix(keyPrefix);
            return this;
        }

        /**
         * Keep keys in Redis as their HMAC-SHA-256 under this secret, so that what callers are
         * counted by never reaches Redis in clear; as
         * {@link RedissonRateLimitStore.Builder#keyHashSecret(byte[])} explains, every instance
         * sharing the limits needs the same secret, which must be kept secret.
         *
         * @param secret at least 16 bytes, best 32 random ones; copied
         * @return this builder
         */
        public Builder keyHashSecret(byte[] secret) {
            this.keyHasher = KeyHasher.of(secret);
            return this;
        }

        /**
         * Keep keys in Redis as their HMAC-SHA-256 under the UTF-8 bytes of this secret; see
         * {@link #keyHashSecret(byte[])}.
         *
         * @param secret at least 16 bytes in UTF-8
         * @return this builder
         */
        public Builder keyHashSecret(String secret) {
            this.keyHasher = KeyHasher.of(secret);
            return this;
        }

        /**
         * The time Bucket4j sends with each request.
         *
         * @param clock default the system clock
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            Objects.requireNonNull(clock, "clock");
            this.timeMeter = new TimeMeter() {
                @Override
                public long currentTimeNanos() {
                    Instant now = clock.instant();
                    return Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000_000L), now.getNano());
                }

                @Override
                public boolean isWallClockBased() {
                    return true;
                }
            };
            return this;
        }

        /**
         * Where asynchronous decisions complete, and so where the caller's continuation runs:
         * the rest of a {@code CompletableFuture} chain, or of a reactive pipeline (an admitted
         * WebFlux handler, or the rejection's response). Redisson completes its replies on its
         * netty threads, which must not run callers' code; the common fork-join pool has one
         * thread on a 2-core machine.
         *
         * @param executor default: a pool shared by the Redis stores of the JVM, of as many daemon
         *                 threads named {@code sluice-redis-<n>} as cores (at least 2), made when
         *                 needed and ended after 10 s idle
         * @return this builder
         */
        public Builder completionExecutor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * How long a decision may take before it fails with {@link StoreUnavailableException}
         * and its limiter applies its failure policy, whatever the client's own timeouts. A
         * Bucket4j decision is a read, then a compare-and-swap, repeated on conflict: all of it
         * must fit, and on a hot key contention alone takes hundreds of milliseconds (16 threads
         * on one key measured a p99 near a second), hence the long default. Commands are never
         * retried by the client.
         *
         * @param timeout at least 2 ms; default 1 second
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            this.timeout = RedisCalls.checkTimeout(timeout);
            return this;
        }

        /**
         * The circuit breaker that stops sending calls to Redis while it keeps failing.
         *
         * @param breaker its open duration at least the store's timeout; default: opens when 16 of the
         *                last 20 calls failed, for the longer of 1 second and the timeout at a time
         * @return this builder
         */
        public Builder circuitBreaker(StoreCircuitBreaker breaker) {
            this.breaker = Objects.requireNonNull(breaker, "breaker");
            return this;
        }

        /**
         * Builds the store.
         *
         * @return the store
         */
        public Bucket4jRedissonStore build() {
            return new Bucket4jRedissonStore(this);
        }
    }
}
