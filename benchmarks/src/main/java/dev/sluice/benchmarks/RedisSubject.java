package dev.sluice.benchmarks;

import dev.sluice.Decision;
import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.redisson.Bucket4jRedissonStore;
import dev.sluice.redisson.RedissonClientConfigs;
import dev.sluice.redisson.RedissonRateLimitStore;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.redisson.Bucket4jRedisson;
import io.github.bucket4j.redis.redisson.cas.RedissonBasedProxyManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Something that decides calls through Redis in {@link RedisLoad} and {@link MemoryFootprint}:
 * one of Sluice's stores, or a library Sluice is compared with, under one set of limits.
 *
 * @param name        what the report calls it
 * @param client      the Redisson client it runs on
 * @param sluice      whether it is Sluice
 * @param scriptTiers for Sluice's Lua store, the tiers of its script call, which
 *                    {@code redis-cli --pipe} repeats as the ceiling; empty for the others
 * @param opener      prepares it for a set of keys
 */
record RedisSubject(String name, Client client, boolean sluice, List<Tier> scriptTiers, Opener opener) {

    /** How many {@code RRateLimiter}s get their rate set at once, so that many keys do not time out the client. */
    private static final int SETTING_AT_ONCE = 10_000;

    /** The name of Redisson's {@code RRateLimiter}, which Sluice's rows are divided by. */
    static final String REDISSON_RATE_LIMITER = "Redisson RRateLimiter";
    /** The name of Sluice's Redis store as built by default, deciding many calls per script call. */
    static final String BATCHED = "Sluice SLIDING_WINDOW, batched (default)";
    /** The name of Sluice's Redis store sending one script call per decision. */
    static final String ONE_CALL_PER_DECISION = "Sluice SLIDING_WINDOW, batchSize(1)";
    /** The name of Sluice's concurrency tier, each call a permit taken and given back. */
    static final String CONCURRENCY_PAIR = "Sluice CONCURRENCY, acquire then release";
    /** The name of Redisson's expirable semaphore, each call a permit taken with a lease and released. */
    static final String REDISSON_SEMAPHORE_PAIR = "Redisson RPermitExpirableSemaphore, acquire then release";
    /** The lease of both. */
    private static final Duration LEASE = Duration.ofSeconds(30);

    /** The name of Sluice's local counting, synced with Redis once a second. */
    static final String LOCAL_SYNC = "Sluice LocalSyncRateLimitStore, SLIDING_WINDOW, 1 s sync";

    /** The Redisson clients subjects run on. */
    enum Client {
        /** {@code RedissonClientConfigs.singleServer}: a pool of 8 kept open, netty threads near the core count. */
        TUNED("tuned"),
        /** {@code Redisson.create(config)} with nothing set but the address. */
        DEFAULT("default");

        private final String label;

        Client(String label) {
            this.label = label;
        }

        /**
         * What the report calls it.
         *
         * @return a short label
         */
        String label() {
            return label;
        }

        /**
         * Creates a client of this kind.
         *
         * @param address the server's address, {@code redis://host:port}
         * @return the client, to be shut down by the caller
         */
        RedissonClient connect(String address) {
            return switch (this) {
                case TUNED -> Redisson.create(RedissonClientConfigs.singleServer(address));
                case DEFAULT -> {
                    Config defaults = new Config();
                    defaults.useSingleServer().setAddress(address);
                    yield Redisson.create(defaults);
                }
            };
        }

        /**
         * One client of each kind.
         *
         * @param address the server's address
         * @return the clients, to be shut down by the caller
         */
        static Map<Client, RedissonClient> connectAll(String address) {
            Map<Client, RedissonClient> clients = new EnumMap<>(Client.class);
            for (Client client : values()) {
                clients.put(client, client.connect(address));
            }
            return clients;
        }
    }

    /** Prepares a subject for a set of keys: limiters made, limits set. */
    @FunctionalInterface
    interface Opener {

        /**
         * Prepares the subject.
         *
         * @param client the client to use
         * @param keys   the keys calls will be made for
         * @return what decides the calls
         */
        Decider open(RedissonClient client, String[] keys);
    }

    /** Decides calls, blocking until the answer or not. */
    interface Decider {

        /**
         * Decides a call, blocking until the answer.
         *
         * @param key the index of the call's key
         * @return whether the call was admitted
         */
        boolean decide(int key);

        /**
         * Decides a call without blocking the calling thread.
         *
         * @param key the index of the call's key
         * @return whether the call was admitted, when decided; a call that got no decision
         *         completes it exceptionally
         */
        CompletionStage<Boolean> decideAsync(int key);
    }

    /**
     * The limit every subject applies in a measurement.
     *
     * @param limit  permits per window
     * @param window the window; two-tier limiters add a second tier of one hour
     */
    record Limits(long limit, Duration window) {

        /** More than any run takes: every call is admitted. */
        static final Limits PERMITTED = new Limits(1_000_000_000L, Duration.ofSeconds(1));
        /** One call an hour: after the first, every call is rejected. */
        static final Limits REJECTED = new Limits(1, Duration.ofHours(1));

        /**
         * One tier of this limit.
         *
         * @param algorithm how it counts
         * @return the tier
         */
        Tier tier(Algorithm algorithm) {
            return Tier.of(limit, window, algorithm);
        }

        /**
         * A limit in two tiers: a sliding window of this window, and a fixed window of an hour.
         *
         * @return the tiers
         */
        List<Tier> twoTiers() {
            return List.of(tier(Algorithm.SLIDING_WINDOW),
                    Tier.of(limit, Duration.ofHours(1), Algorithm.FIXED_WINDOW));
        }
    }

    /**
     * Every subject, under one set of limits: Sluice's Lua store per algorithm, in two tiers and on
     * a default client, Sluice's Bucket4j store, then the libraries it is compared with.
     *
     * @param limits the limits they all apply
     * @return the subjects, Sluice's first
     */
    static List<RedisSubject> all(Limits limits) {
        List<RedisSubject> subjects = new ArrayList<>();
        for (Algorithm algorithm : EnumSet.complementOf(EnumSet.of(Algorithm.CONCURRENCY))) {
            subjects.add(luaStore("Sluice " + algorithm, Client.TUNED, List.of(limits.tier(algorithm))));
        }
        subjects.add(luaStore("Sluice two tiers, SLIDING_WINDOW + FIXED_WINDOW 1h", Client.TUNED, limits.twoTiers()));
        subjects.add(luaStore("Sluice SLIDING_WINDOW", Client.DEFAULT,
                List.of(limits.tier(Algorithm.SLIDING_WINDOW))));
        List<Tier> slidingWindow = List.of(limits.tier(Algorithm.SLIDING_WINDOW));
        subjects.add(new RedisSubject(LOCAL_SYNC, Client.TUNED, true, List.of(), (client, keys) -> store(
                LocalSyncRateLimitStore.builder(RedissonRateLimitStore.builder(client).build()).build(), keys,
                slidingWindow)));
        List<Tier> tokenBucket = List.of(limits.tier(Algorithm.TOKEN_BUCKET));
        subjects.add(new RedisSubject("Sluice Bucket4jRedissonStore, TOKEN_BUCKET", Client.TUNED, true, List.of(),
                (client, keys) -> store(Bucket4jRedissonStore.builder(client).build(), keys, tokenBucket)));
        subjects.add(redissonRateLimiter(limits));
        List<Tier> concurrency = List.of(Tier.concurrency(limits.limit(), LEASE));
        subjects.add(new RedisSubject(CONCURRENCY_PAIR, Client.TUNED, true, List.of(),
                (client, keys) -> pairs(RedissonRateLimitStore.builder(client).build(), keys, concurrency)));
        subjects.add(new RedisSubject(REDISSON_SEMAPHORE_PAIR, Client.DEFAULT, false, List.of(),
                (client, keys) -> semaphorePairs(client, keys, limits)));
        subjects.add(new RedisSubject("Bucket4j RedissonBasedProxyManager", Client.DEFAULT, false, List.of(),
                (client, keys) -> bucket4jProxies(client, keys, limits)));
        return subjects;
    }

    /**
     * Sluice's Redis store built by default, sending many decisions per script call; the same
     * store sending one script call per decision ({@code batchSize(1)}); and Redisson's
     * {@code RRateLimiter}. Sluice's as in {@link #all}: a sliding window on the tuned client.
     *
     * @param limits the limits they all apply
     * @return the subjects, the batched store first
     */
    static List<RedisSubject> batching(Limits limits) {
        List<Tier> slidingWindow = List.of(limits.tier(Algorithm.SLIDING_WINDOW));
        return List.of(
                new RedisSubject(BATCHED, Client.TUNED, true, slidingWindow, (client, keys) -> store(
                        RedissonRateLimitStore.builder(client).build(), keys, slidingWindow)),
                new RedisSubject(ONE_CALL_PER_DECISION, Client.TUNED, true, slidingWindow, (client, keys) -> store(
                        RedissonRateLimitStore.builder(client).batchSize(1).build(), keys, slidingWindow)),
                redissonRateLimiter(limits));
    }

    private static RedisSubject luaStore(String name, Client client, List<Tier> tiers) {
        return new RedisSubject(name, client, true, tiers,
                (redisson, keys) -> store(RedissonRateLimitStore.builder(redisson).build(), keys, tiers));
    }

    private static RedisSubject redissonRateLimiter(Limits limits) {
        return new RedisSubject(REDISSON_RATE_LIMITER, Client.DEFAULT, false, List.of(),
                (client, keys) -> redissonRateLimiters(client, keys, limits));
    }

    /** A Sluice store as it is built by default: the 100 ms timeout and the circuit breaker included. */
    private static Decider store(RateLimitStore store, String[] keys, List<Tier> tiers) {
        return new Decider() {
            @Override
            public boolean decide(int key) {
                return store.tryAcquire(keys[key], tiers, 1).allowed();
            }

            @Override
            public CompletionStage<Boolean> decideAsync(int key) {
                return store.tryAcquireAsync(keys[key], tiers, 1).thenApply(Decision::allowed);
            }
        };
    }

    /** A Sluice store taking a permit of a concurrency tier and giving it back, as a call that runs no time holds it. */
    private static Decider pairs(RateLimitStore store, String[] keys, List<Tier> tiers) {
        return new Decider() {
            @Override
            public boolean decide(int key) {
                if (!store.tryAcquire(keys[key], tiers, 1).allowed()) {
                    return false;
                }
                store.giveBack(keys[key], tiers, 1, Duration.ZERO);
                return true;
            }

            @Override
            public CompletionStage<Boolean> decideAsync(int key) {
                return store.tryAcquireAsync(keys[key], tiers, 1).thenCompose(decision -> !decision.allowed()
                        ? CompletableFuture.completedFuture(false)
                        : store.giveBackAsync(keys[key], tiers, 1, Duration.ZERO).thenApply(given -> true));
            }
        };
    }

    /**
     * One {@code RPermitExpirableSemaphore} per key, its permits set first ({@code trySetPermits},
     * at most {@value #SETTING_AT_ONCE} keys at a time), then {@code tryAcquire} with no wait and
     * the lease, and {@code release} of the permit.
     */
    private static Decider semaphorePairs(RedissonClient client, String[] keys, Limits limits) {
        RPermitExpirableSemaphore[] semaphores = new RPermitExpirableSemaphore[keys.length];
        for (int from = 0; from < keys.length; from += SETTING_AT_ONCE) {
            List<CompletableFuture<Boolean>> set = new ArrayList<>();
            for (int i = from; i < Math.min(keys.length, from + SETTING_AT_ONCE); i++) {
                semaphores[i] = client.getPermitExpirableSemaphore(keys[i]);
                set.add(semaphores[i].trySetPermitsAsync(Math.toIntExact(limits.limit())).toCompletableFuture());
            }
            CompletableFuture.allOf(set.toArray(CompletableFuture[]::new)).join();
        }
        long lease = LEASE.toMillis();
        return new Decider() {
            @Override
            public boolean decide(int key) {
                String permit;
                try {
                    permit = semaphores[key].tryAcquire(0, lease, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                if (permit == null) {
                    return false;
                }
                semaphores[key].release(permit);
                return true;
            }

            @Override
            public CompletionStage<Boolean> decideAsync(int key) {
                return semaphores[key].tryAcquireAsync(0, lease, TimeUnit.MILLISECONDS).thenCompose(permit ->
                        permit == null ? CompletableFuture.completedFuture(false)
                                : semaphores[key].releaseAsync(permit).thenApply(released -> true));
            }
        };
    }

    /**
     * One {@code RRateLimiter} per key, its rate set first ({@code trySetRate}, at most
     * {@value #SETTING_AT_ONCE} keys at a time), then {@code tryAcquire()}.
     */
    private static Decider redissonRateLimiters(RedissonClient client, String[] keys, Limits limits) {
        RRateLimiter[] limiters = new RRateLimiter[keys.length];
        for (int from = 0; from < keys.length; from += SETTING_AT_ONCE) {
            List<CompletableFuture<Boolean>> rates = new ArrayList<>();
            for (int i = from; i < Math.min(keys.length, from + SETTING_AT_ONCE); i++) {
                limiters[i] = client.getRateLimiter(keys[i]);
                rates.add(limiters[i].trySetRateAsync(RateType.OVERALL, limits.limit(), limits.window())
                        .toCompletableFuture());
            }
            CompletableFuture.allOf(rates.toArray(CompletableFuture[]::new)).join();
        }
        return new Decider() {
            @Override
            public boolean decide(int key) {
                return limiters[key].tryAcquire();
            }

            @Override
            public CompletionStage<Boolean> decideAsync(int key) {
                return limiters[key].tryAcquireAsync();
            }
        };
    }

    /**
     * One Bucket4j bucket per key, refilled greedily, through Bucket4j's own compare-and-swap
     * proxy manager, with keys expiring ten seconds after the bucket is full again, as Bucket4j's
     * documentation shows it; asynchronously, through the same manager's asynchronous proxies.
     */
    private static Decider bucket4jProxies(RedissonClient client, String[] keys, Limits limits) {
        RedissonBasedProxyManager<String> buckets = Bucket4jRedisson
                .casBasedBuilder(((Redisson) client).getCommandExecutor())
                .expirationAfterWrite(
                        ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                .build();
        BucketConfiguration configuration = BucketConfiguration.builder()
                .addLimit(Bandwidth.builder().capacity(limits.limit())
                        .refillGreedy(limits.limit(), limits.window()).build())
                .build();
        BucketProxy[] proxies = new BucketProxy[keys.length];
        AsyncBucketProxy[] asyncProxies = new AsyncBucketProxy[keys.length];
        for (int i = 0; i < keys.length; i++) {
            proxies[i] = buckets.builder().build(keys[i], () -> configuration);
            asyncProxies[i] = buckets.asAsync().builder()
                    .build(keys[i], () -> CompletableFuture.completedFuture(configuration));
        }
        return new Decider() {
            @Override
            public boolean decide(int key) {
                return proxies[key].tryConsume(1);
            }

            @Override
            public CompletionStage<Boolean> decideAsync(int key) {
                return asyncProxies[key].tryConsume(1);
            }
        };
    }
}
