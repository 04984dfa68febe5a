package dev.sluice.boot.autoconfigure;

import dev.sluice.OverloadPolicy;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.boot.web.ClientIpResolver;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code sluice.*}.
 *
 * <pre class="code">
 * sluice:
 *   store: redis
 *   web:
 *     trusted-proxies: 10.0.0.0/8
 *   limits:
 *     org-reads:
 *       tiers:
 *         - limit: 1000
 *           window: 10s
 * </pre>
 */
@ConfigurationProperties(prefix = "sluice", ignoreUnknownFields = false)
public class SluiceProperties {

    /** Whether @RateLimited methods are limited at all. */
    private boolean enabled = true;

    /** Where counts are kept: in this JVM (memory), or in Redis, shared by every instance (redis). */
    private StoreType store = StoreType.MEMORY;

    /**
     * What a limited call does when the store cannot decide it (unreachable, too slow, its
     * circuit breaker open): decide it in this JVM (local-fallback), admit it (fail-open), or
     * refuse it with 503 (fail-closed). A limiter's own onStoreFailure takes precedence.
     */
    private FailurePolicy failurePolicy = FailurePolicy.LOCAL_FALLBACK;

    /**
     * What a limited call does when its key or cost expression gives no value (it throws, or
     * yields null, a blank key or a cost below 1): refuse it with 400 (reject), count it under one
     * key shared by all such calls (shared-key), or let it through (skip). A limiter's own
     * onKeyError takes precedence.
     */
    private KeyErrorPolicy keyError = KeyErrorPolicy.REJECT;

    private final Memory memory = new Memory();

    private final Redis redis = new Redis();

    private final Web web = new Web();

    /**
     * Limits by limiter name, overriding the tiers their annotations declare. Names containing
     * dots need brackets: sluice.limits[OtpController.sendOtp].tiers[0].limit.
     */
    private final Map<String, Limit> limits = new LinkedHashMap<>();

    private final Http http = new Http();

    private final Client client = new Client();

    private final Aspect aspect = new Aspect();

    private final CircuitBreaker circuitBreaker = new CircuitBreaker();

    private final TopKeys topKeys = new TopKeys();

    /**
     * Whether @RateLimited methods are limited at all.
     *
     * @return the flag
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Turns limiting on or off.
     *
     * @param enabled the flag
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Where counts are kept.
     *
     * @return the store type
     */
    public StoreType getStore() {
        return store;
    }

    /**
     * Sets where counts are kept.
     *
     * @param store the store type
     */
    public void setStore(StoreType store) {
        this.store = store;
    }

    /**
     * What a limited call does when the store fails.
     *
     * @return the policy
     */
    public FailurePolicy getFailurePolicy() {
        return failurePolicy;
    }

    /**
     * Sets what a limited call does when the store fails.
     *
     * @param failurePolicy the policy
     */
    public void setFailurePolicy(FailurePolicy failurePolicy) {
        this.failurePolicy = failurePolicy;
    }

    /**
     * What a limited call does when its key or cost cannot be worked out.
     *
     * @return the policy
     */
    public KeyErrorPolicy getKeyError() {
        return keyError;
    }

    /**
     * Sets what a limited call does when its key or cost cannot be worked out.
     *
     * @param keyError the policy
     */
    public void setKeyError(KeyErrorPolicy keyError) {
        this.keyError = keyError;
    }

    /**
     * The in-memory store's settings.
     *
     * @return the settings
     */
    public Memory getMemory() {
        return memory;
    }

    /**
     * The Redis store's settings.
     *
     * @return the settings
     */
    public Redis getRedis() {
        return redis;
    }

    /**
     * The web settings.
     *
     * @return the settings
     */
    public Web getWeb() {
        return web;
    }

    /**
     * Limits by limiter name.
     *
     * @return the limits
     */
    public Map<String, Limit> getLimits() {
        return limits;
    }

    /**
     * Limits on HTTP requests from configuration alone.
     *
     * @return the settings
     */
    public Http getHttp() {
        return http;
    }

    /**
     * Limits on the application's own calls to HTTP APIs, from configuration alone.
     *
     * @return the settings
     */
    public Client getClient() {
        return client;
    }

    /**
     * Where the aspect runs among other advice.
     *
     * @return the settings
     */
    public Aspect getAspect() {
        return aspect;
    }

    /**
     * Who each limiter is limiting, for the actuator's top keys.
     *
     * @return the settings
     */
    public TopKeys getTopKeys() {
        return topKeys;
    }

    /**
     * Which exceptions of the store are outages, for its circuit breaker and the failure policy.
     *
     * @return the settings
     */
    public CircuitBreaker getCircuitBreaker() {
        return circuitBreaker;
    }

    /** Where counts are kept. */
    public enum StoreType {
        /** In this JVM: no set-up, limits per instance. */
        MEMORY,
        /** In Redis, through Redisson: limits shared by every instance. */
        REDIS
    }

    /** The in-memory store's settings. */
    public static class Memory {

        /** The most keys held at once; beyond it the keys least likely to be used again start afresh. */
        private long maximumKeys = 100_000;

        /**
         * The most keys held at once.
         *
         * @return the bound
         */
        public long getMaximumKeys() {
            return maximumKeys;
        }

        /**
         * Sets the most keys held at once.
         *
         * @param maximumKeys the bound
         */
        public void setMaximumKeys(long maximumKeys) {
            this.maximumKeys = maximumKeys;
        }
    }

    /**
     * The Redis store's settings. The application's own RedissonClient bean is used when there
     * is one; otherwise one is made from these. When they name neither an address nor cluster
     * nodes, the client connects where Spring Boot's {@code spring.data.redis.*} settings say
     * (url, host, port, username, password, database, ssl.enabled, cluster.nodes, sentinel.*,
     * timeout, connect-timeout), which is localhost:6379 by default. The client Sluice makes
     * connects lazily: the application starts while Redis is down.
     */
    public static class Redis {

        /**
         * The server's address, such as redis://10.0.0.5:6379, when no cluster nodes are given.
         * Without it, Spring Boot's spring.data.redis settings are used.
         */
        private @Nullable String address;

        /** Addresses of cluster nodes; when given, the client connects to a Redis Cluster. */
        private List<String> nodes = new ArrayList<>();

        /** User name, for servers with ACLs. */
        private @Nullable String username;

        /** Password. */
        private @Nullable String password;

        /** The first part of every key Sluice writes. */
        private String keyPrefix = "sluice";

        /**
         * How long a decision may take before it fails and its limiter follows its failure
         * policy: the most a Redis outage costs a call. Default 100ms; when Sluice makes its own
         * client, spring.data.redis.timeout applies if this is not set.
         */
        private @Nullable Duration timeout;

        /**
         * A secret under which keys are kept in Redis as their HMAC-SHA-256, so that what callers
         * are counted by (phone numbers, e-mail addresses) never reaches Redis in clear. At least
         * 16 bytes, best 32 random ones. It must be the same on every instance sharing the limits
         * (changing it starts every key afresh), and must be kept secret, as a password. Unset:
         * keys are kept as they are.
         */
        private @Nullable String keyHashSecret;

        /**
         * The most decisions one script call sends: decisions that wait while calls to Redis are
         * in flight leave together, many per call, from 1 (one call per decision) to 1024.
         * Default 128.
         */
        private @Nullable Integer batchSize;

        /**
         * The most decisions that may wait to be sent at once; those beyond it get the overload
         * policy at once, so that a spike costs bounded memory. At least 1; default 20000.
         */
        private @Nullable Integer maxQueued;

        /**
         * The longest a decision may wait to be sent; one that waited longer gets the overload
         * policy instead. Positive; default 1s. Not part of the timeout, which counts from when a
         * decision is sent.
         */
        private @Nullable Duration maxQueueWait;

        /**
         * What decisions beyond the queue (max-queued, max-queue-wait) get: a rejection, answered
         * with 429 and Retry-After, never 503 (reject); or a decision in this JVM with the same
         * tiers, so that a limit shared by n instances admits up to n times its figure while the
         * spike lasts (local-fallback). Either way no failure policy applies: an overload is a
         * spike, not an outage.
         */
        private OverloadPolicy onOverload = OverloadPolicy.REJECT;

        /**
         * The longest start-up waits for the store to connect to Redis and load its script, so
         * that the application reports ready with the first decisions paying neither. When Redis
         * cannot be reached in that time, a warning says so and the application starts anyway:
         * the store connects with its first decisions, which follow the failure policy until it
         * does. 0s: do not wait, connect in the background.
         */
        private Duration warmUpTimeout = Duration.ofSeconds(5);

        /**
         * Whether live changes of limits through the actuator's ratelimits endpoint are made for
         * every instance sharing this Redis: recorded there with their version, author and time,
         * applied by each instance within 2 seconds, by those started later as they start, and kept
         * until taken back; and a client rule's pause is told to every instance, whose waiting
         * requests then wait through it. false: a change lives in the instance that made it, until
         * it restarts, and a pause reaches the others as their requests next ask Redis.
         */
        private boolean shareChanges = true;

        /** Counting in this JVM, synced with Redis on an interval, for the hottest limiters. */
        private final LocalSync localSync = new LocalSync();

        /**
         * Counting in this JVM, synced with Redis on an interval.
         *
         * @return the settings
         */
        public LocalSync getLocalSync() {
            return localSync;
        }

        /**
         * The server's address.
         *
         * @return the address, or null to use Spring Boot's spring.data.redis settings
         */
        public @Nullable String getAddress() {
            return address;
        }

        /**
         * Sets the server's address.
         *
         * @param address the address
         */
        public void setAddress(@Nullable String address) {
            this.address = address;
        }

        /**
         * Addresses of cluster nodes.
         *
         * @return the addresses; empty for a single server
         */
        public List<String> getNodes() {
            return nodes;
        }

        /**
         * Sets the addresses of cluster nodes.
         *
         * @param nodes the addresses
         */
        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }

        /**
         * The user name.
         *
         * @return the user name, or null
         */
        public @Nullable String getUsername() {
            return username;
        }

        /**
         * Sets the user name.
         *
         * @param username the user name
         */
        public void setUsername(@Nullable String username) {
            this.username = username;
        }

        /**
         * The password.
         *
         * @return the password, or null
         */
        public @Nullable String getPassword() {
            return password;
        }

        /**
         * Sets the password.
         *
         * @param password the password
         */
        public void setPassword(@Nullable String password) {
            this.password = password;
        }

        /**
         * The first part of every key.
         *
         * @return the prefix
         */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /**
         * Sets the first part of every key.
         *
         * @param keyPrefix the prefix
         */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        /**
         * How long a decision may take.
         *
         * @return the timeout, or null for the default
         */
        public @Nullable Duration getTimeout() {
            return timeout;
        }

        /**
         * Sets how long a decision may take.
         *
         * @param timeout the timeout
         */
        public void setTimeout(@Nullable Duration timeout) {
            this.timeout = timeout;
        }

        /**
         * The secret keys are hashed under.
         *
         * @return the secret, or null to keep keys as they are
         */
        public @Nullable String getKeyHashSecret() {
            return keyHashSecret;
        }

        /**
         * Sets the secret keys are hashed under.
         *
         * @param keyHashSecret the secret
         */
        public void setKeyHashSecret(@Nullable String keyHashSecret) {
            this.keyHashSecret = keyHashSecret;
        }

        /**
         * The most decisions one script call sends.
         *
         * @return the batch size, or null for the store's default
         */
        public @Nullable Integer getBatchSize() {
            return batchSize;
        }

        /**
         * Sets the most decisions one script call sends.
         *
         * @param batchSize from 1 to 1024
         */
        public void setBatchSize(@Nullable Integer batchSize) {
            this.batchSize = batchSize;
        }

        /**
         * The most decisions that may wait to be sent at once.
         *
         * @return the bound, or null for the store's default
         */
        public @Nullable Integer getMaxQueued() {
            return maxQueued;
        }

        /**
         * Sets the most decisions that may wait to be sent at once.
         *
         * @param maxQueued at least 1
         */
        public void setMaxQueued(@Nullable Integer maxQueued) {
            this.maxQueued = maxQueued;
        }

        /**
         * The longest a decision may wait to be sent.
         *
         * @return the wait, or null for the store's default
         */
        public @Nullable Duration getMaxQueueWait() {
            return maxQueueWait;
        }

        /**
         * Sets the longest a decision may wait to be sent.
         *
         * @param maxQueueWait positive
         */
        public void setMaxQueueWait(@Nullable Duration maxQueueWait) {
            this.maxQueueWait = maxQueueWait;
        }

        /**
         * What decisions beyond the queue get.
         *
         * @return the overload policy
         */
        public OverloadPolicy getOnOverload() {
            return onOverload;
        }

        /**
         * Sets what decisions beyond the queue get.
         *
         * @param onOverload the overload policy
         */
        public void setOnOverload(OverloadPolicy onOverload) {
            this.onOverload = onOverload;
        }

        /**
         * The longest start-up waits for the store to connect and load its script.
         *
         * @return the timeout; zero not to wait
         */
        public Duration getWarmUpTimeout() {
            return warmUpTimeout;
        }

        /**
         * Sets the longest start-up waits for the store to connect and load its script.
         *
         * @param warmUpTimeout zero or more
         */
        public void setWarmUpTimeout(Duration warmUpTimeout) {
            this.warmUpTimeout = warmUpTimeout;
        }

        /**
         * Whether live changes of limits are made for every instance sharing this Redis.
         *
         * @return true by default
         */
        public boolean isShareChanges() {
            return shareChanges;
        }

        /**
         * Sets whether live changes of limits are made for every instance sharing this Redis.
         *
         * @param shareChanges false to keep them in the instance that made them
         */
        public void setShareChanges(boolean shareChanges) {
            this.shareChanges = shareChanges;
        }
    }

    /**
     * {@code sluice.redis.local-sync.*}: limiters that count in this JVM and add their counts to
     * Redis once an interval per key, at the price of a bounded overshoot (see
     * {@link dev.sluice.LocalSyncRateLimitStore}).
     */
    public static class LocalSync {

        /**
         * Whether every limiter counts locally, unless its sluice.limits.<name>.local-sync says
         * false. Limiters whose tiers local counting cannot honour (sliding logs, token buckets,
         * block-for) then fail start-up.
         */
        private boolean enabled;

        /**
         * How often each key in use syncs with Redis; each instance may admit its share of a
         * tier, ceil(limit x interval / window), before it syncs at once.
         */
        private Duration interval = Duration.ofSeconds(1);

        /** The most keys held in memory; past it, the least used are synced and dropped. */
        private long maximumKeys = 100_000;

        /**
         * Whether every limiter counts locally.
         *
         * @return the flag
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether every limiter counts locally.
         *
         * @param enabled the flag
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * How often each key in use syncs.
         *
         * @return the interval
         */
        public Duration getInterval() {
            return interval;
        }

        /**
         * Sets how often each key in use syncs.
         *
         * @param interval from 1 ms to 1 hour
         */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        /**
         * The most keys held in memory.
         *
         * @return the bound
         */
        public long getMaximumKeys() {
            return maximumKeys;
        }

        /**
         * Sets the most keys held in memory.
         *
         * @param maximumKeys at least 1
         */
        public void setMaximumKeys(long maximumKeys) {
            this.maximumKeys = maximumKeys;
        }
    }

    /** The web settings. */
    public static class Web {

        /** The problem type registered for exceeded quotas: the default type of 429 bodies. */
        public static final URI QUOTA_EXCEEDED =
                URI.create("https://iana.org/assignments/http-problem-types#quota-exceeded");

        /** Which rate-limit headers responses carry. */
        private Headers headers = Headers.BOTH;

        /**
         * Proxies (addresses or CIDR ranges) whose Forwarded and X-Forwarded-For headers are
         * believed when they are the direct peer; from no one else.
         */
        private List<String> trustedProxies = new ArrayList<>();

        /** The header the trusted proxies put the client's address in; the other one is ignored. */
        private ClientIpResolver.ForwardingHeader forwardedHeader = ClientIpResolver.ForwardingHeader.X_FORWARDED_FOR;

        /**
         * The prefix length, from 1 to 128, by which IPv6 clients are grouped into one #ip: the
         * network address of the client's prefix, such as 2001:db8:1:2::/64. One host usually
         * owns a whole /64 and can take any address in it, so a longer prefix lets it escape its
         * limit by rotating addresses. 128 gives each address its own key.
         */
        private int ipv6Prefix = 64;

        /**
         * The problem type URI of 429 bodies. Default: the IANA-registered
         * https://iana.org/assignments/http-problem-types#quota-exceeded.
         */
        private URI problemType = QUOTA_EXCEEDED;

        /**
         * Which rate-limit headers responses carry.
         *
         * @return the choice
         */
        public Headers getHeaders() {
            return headers;
        }

        /**
         * Sets which rate-limit headers responses carry.
         *
         * @param headers the choice
         */
        public void setHeaders(Headers headers) {
            this.headers = headers;
        }

        /**
         * The trusted proxies.
         *
         * @return addresses or CIDR ranges
         */
        public List<String> getTrustedProxies() {
            return trustedProxies;
        }

        /**
         * Sets the trusted proxies.
         *
         * @param trustedProxies addresses or CIDR ranges
         */
        public void setTrustedProxies(List<String> trustedProxies) {
            this.trustedProxies = trustedProxies;
        }

        /**
         * The header trusted proxies set.
         *
         * @return the header
         */
        public ClientIpResolver.ForwardingHeader getForwardedHeader() {
            return forwardedHeader;
        }

        /**
         * Sets the header trusted proxies set.
         *
         * @param forwardedHeader the header
         */
        public void setForwardedHeader(ClientIpResolver.ForwardingHeader forwardedHeader) {
            this.forwardedHeader = forwardedHeader;
        }

        /**
         * The prefix length IPv6 clients are grouped by.
         *
         * @return the length; 64 unless set
         */
        public int getIpv6Prefix() {
            return ipv6Prefix;
        }

        /**
         * Sets the prefix length IPv6 clients are grouped by; the client address resolver refuses
         * lengths outside 1 to 128.
         *
         * @param ipv6Prefix the length
         */
        public void setIpv6Prefix(int ipv6Prefix) {
            this.ipv6Prefix = ipv6Prefix;
        }

        /**
         * The problem type of 429 bodies.
         *
         * @return the type URI
         */
        public URI getProblemType() {
            return problemType;
        }

        /**
         * Sets the problem type of 429 bodies.
         *
         * @param problemType the type URI
         */
        public void setProblemType(URI problemType) {
            this.problemType = problemType;
        }
    }

    /** Which rate-limit headers responses carry. */
    public enum Headers {
        /** RateLimit-Policy and RateLimit, of draft-ietf-httpapi-ratelimit-headers-11. */
        IETF,
        /** X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset. */
        X_RATELIMIT,
        /** Both kinds. */
        BOTH,
        /** None (Retry-After is still sent with 429). */
        NONE
    }

    /** One limiter's configuration. */
    public static class Limit {

        /** Whether the limiter is on; off, it lets every call through. */
        private boolean enabled = true;

        /** Tiers replacing all of the annotation's; empty to keep the annotation's. */
        private List<TierProperties> tiers = new ArrayList<>();

        /** Plans by name, each with tiers replacing the default ones for the calls of that plan. */
        private final Map<String, Plan> plans = new LinkedHashMap<>();

        /**
         * A SpEL expression over the call replacing the annotation's condition: a call for which
         * it is false is neither limited nor counted. Empty to keep the annotation's.
         */
        private String condition = "";

        /**
         * Whether the limiter counts in this JVM and syncs with Redis on an interval
         * (sluice.redis.local-sync); unset: as sluice.redis.local-sync.enabled says. Needs
         * sluice.store=redis.
         */
        private @Nullable Boolean localSync;

        /**
         * Whether the limiter counts locally, synced with Redis.
         *
         * @return the flag, or null to follow sluice.redis.local-sync.enabled
         */
        public @Nullable Boolean getLocalSync() {
            return localSync;
        }

        /**
         * Sets whether the limiter counts locally, synced with Redis.
         *
         * @param localSync the flag, or null to follow sluice.redis.local-sync.enabled
         */
        public void setLocalSync(@Nullable Boolean localSync) {
            this.localSync = localSync;
        }

        /**
         * Whether the limiter is on.
         *
         * @return the flag
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Turns the limiter on or off.
         *
         * @param enabled the flag
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The configured tiers.
         *
         * @return the tiers; empty to keep the annotation's
         */
        public List<TierProperties> getTiers() {
            return tiers;
        }

        /**
         * Sets the tiers.
         *
         * @param tiers the tiers
         */
        public void setTiers(List<TierProperties> tiers) {
            this.tiers = tiers;
        }

        /**
         * The limiter's plans by name, each with tiers replacing the default ones for the calls
         * of that plan.
         *
         * @return the plans
         */
        public Map<String, Plan> getPlans() {
            return plans;
        }

        /**
         * The condition replacing the annotation's.
         *
         * @return the SpEL expression; empty to keep the annotation's
         */
        public String getCondition() {
            return condition;
        }

        /**
         * Sets the condition replacing the annotation's.
         *
         * @param condition the SpEL expression; empty to keep the annotation's
         */
        public void setCondition(String condition) {
            this.condition = condition;
        }
    }

    /** One plan of a limiter. */
    public static class Plan {

        /** The tiers of the plan's calls, replacing the limiter's default tiers. */
        private List<TierProperties> tiers = new ArrayList<>();

        /**
         * The plan's tiers.
         *
         * @return the tiers
         */
        public List<TierProperties> getTiers() {
            return tiers;
        }

        /**
         * Sets the plan's tiers.
         *
         * @param tiers the tiers
         */
        public void setTiers(List<TierProperties> tiers) {
            this.tiers = tiers;
        }
    }

    /** Limits on HTTP requests from configuration alone. */
    public static class Http {

        /**
         * Rules limiting requests by method and path, without annotations; a request matching
         * several is decided by each, in this order.
         */
        private List<Rule> rules = new ArrayList<>();

        /**
         * The rules.
         *
         * @return the rules
         */
        public List<Rule> getRules() {
            return rules;
        }

        /**
         * Sets the rules.
         *
         * @param rules the rules
         */
        public void setRules(List<Rule> rules) {
            this.rules = rules;
        }
    }

    /** One HTTP rule: a limiter for the requests matching a path pattern and methods. */
    public static class Rule {

        /** The limiter's name, shown in headers, metrics and the actuator endpoint. */
        private @Nullable String name;

        /** The path pattern, in Spring's PathPattern syntax: /v1/organizations/{orgId}/product/**. */
        private @Nullable String path;

        /**
         * The HTTP methods the rule applies to, GET covering HEAD as Spring routes HEAD to GET
         * handlers; all methods when empty.
         */
        private List<String> methods = new ArrayList<>();

        /**
         * The SpEL key expression, over #ip, #request, #path (the path's URI variables) and beans
         * (@name), without types or constructors; empty for one key shared by all matching
         * requests.
         */
        private String key = "";

        /**
         * The SpEL expression naming the plan of a request; empty for the default tiers. Plans
         * are configured under sluice.limits.<name>.plans.
         */
        private String plan = "";

        /**
         * The SpEL condition, over the same variables as the key: a request for which it is false
         * is neither limited nor counted by the rule; empty to decide every matching request.
         */
        private String condition = "";

        /**
         * The response statuses that count: a request takes its permit before the handler runs,
         * and gets it back once its response has another status. Codes (401) or classes (4xx);
         * empty to count every request.
         */
        private List<String> countOn = new ArrayList<>();

        /** The tiers every matching request must pass. */
        private List<TierProperties> tiers = new ArrayList<>();

        /**
         * The limiter's name.
         *
         * @return the name
         */
        public @Nullable String getName() {
            return name;
        }

        /**
         * Sets the limiter's name.
         *
         * @param name the name
         */
        public void setName(@Nullable String name) {
            this.name = name;
        }

        /**
         * The path pattern.
         *
         * @return the pattern
         */
        public @Nullable String getPath() {
            return path;
        }

        /**
         * Sets the path pattern.
         *
         * @param path the pattern
         */
        public void setPath(@Nullable String path) {
            this.path = path;
        }

        /**
         * The HTTP methods.
         *
         * @return the methods; empty for all
         */
        public List<String> getMethods() {
            return methods;
        }

        /**
         * Sets the HTTP methods.
         *
         * @param methods the methods
         */
        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        /**
         * The key expression.
         *
         * @return the expression; empty for one shared key
         */
        public String getKey() {
            return key;
        }

        /**
         * Sets the key expression.
         *
         * @param key the expression
         */
        public void setKey(String key) {
            this.key = key;
        }

        /**
         * The plan expression.
         *
         * @return the expression; empty for the default tiers
         */
        public String getPlan() {
            return plan;
        }

        /**
         * Sets the plan expression.
         *
         * @param plan the expression
         */
        public void setPlan(String plan) {
            this.plan = plan;
        }

        /**
         * The condition expression.
         *
         * @return the expression; empty to decide every matching request
         */
        public String getCondition() {
            return condition;
        }

        /**
         * Sets the condition expression.
         *
         * @param condition the expression
         */
        public void setCondition(String condition) {
            this.condition = condition;
        }

        /**
         * The response statuses that count.
         *
         * @return codes such as 401 or classes such as 4xx; empty to count every request
         */
        public List<String> getCountOn() {
            return countOn;
        }

        /**
         * Sets the response statuses that count.
         *
         * @param countOn codes such as 401 or classes such as 4xx
         */
        public void setCountOn(List<String> countOn) {
            this.countOn = countOn;
        }

        /**
         * The tiers.
         *
         * @return the tiers
         */
        public List<TierProperties> getTiers() {
            return tiers;
        }

        /**
         * Sets the tiers.
         *
         * @param tiers the tiers
         */
        public void setTiers(List<TierProperties> tiers) {
            this.tiers = tiers;
        }
    }

    /**
     * Limits on the application's calls to other HTTP APIs, applied to the RestClient,
     * WebClient and RestTemplate builders Spring Boot provides.
     */
    public static class Client {

        /**
         * Rules limiting outbound requests by host, path and method; a request matching several
         * is decided by each, in this order.
         */
        private List<ClientRule> rules = new ArrayList<>();

        /**
         * The longest a partner's answer may pause a rule's calls: a longer Retry-After or reset
         * is cut to it.
         */
        private Duration maxPause = Duration.ofHours(1);

        /**
         * The rules.
         *
         * @return the rules
         */
        public List<ClientRule> getRules() {
            return rules;
        }

        /**
         * Sets the rules.
         *
         * @param rules the rules
         */
        public void setRules(List<ClientRule> rules) {
            this.rules = rules;
        }

        /**
         * The longest pause a partner's answer may cause.
         *
         * @return the ceiling
         */
        public Duration getMaxPause() {
            return maxPause;
        }

        /**
         * Sets the longest pause a partner's answer may cause.
         *
         * @param maxPause the ceiling
         */
        public void setMaxPause(Duration maxPause) {
            this.maxPause = maxPause;
        }
    }

    /** One client rule: a limiter for the outbound requests to a host, matching a path pattern and methods. */
    public static class ClientRule {

        /** The limiter's name, shown in metrics and the actuator endpoint. */
        private @Nullable String name;

        /**
         * The host the rule applies to, optionally with a port: api.partner.com or
         * localhost:8080; without a port, any port of the host.
         */
        private @Nullable String host;

        /** The path pattern of the requests, in Spring's PathPattern syntax: /v1/quotes/{symbol}. */
        private String path = "/**";

        /** The HTTP methods the rule applies to; all methods when empty. */
        private List<String> methods = new ArrayList<>();

        /**
         * The SpEL key expression, over #request (the outbound request), #host, #path (the
         * path's URI variables) and beans (@name), without types or constructors; empty for one
         * key shared by all matching requests.
         */
        private String key = "";

        /**
         * The SpEL expression naming the plan of a request; empty for the default tiers. Plans
         * are configured under sluice.limits.<name>.plans.
         */
        private String plan = "";

        /**
         * The tiers every matching request must pass, counted when the request is sent. A tier
         * without an algorithm is a sliding log, which holds to the limit within any window, as
         * partners count.
         */
        private List<TierProperties> tiers = new ArrayList<>();

        /** What a request that does not fit does: wait for a permit (wait) or fail at once (reject). */
        private OnLimit onLimit = OnLimit.WAIT;

        /** With on-limit: wait, the longest a request waits for a permit before it fails. */
        private Duration maxWait = Duration.ofSeconds(30);

        /**
         * Whether the partner's answers drive the limit: a 429 or 503 with Retry-After, or
         * RateLimit or X-RateLimit fields saying nothing is left, pause the key until then, and a
         * lower quota the partner states replaces the configured one.
         */
        private boolean adapt = true;

        /**
         * The limiter's name.
         *
         * @return the name
         */
        public @Nullable String getName() {
            return name;
        }

        /**
         * Sets the limiter's name.
         *
         * @param name the name
         */
        public void setName(@Nullable String name) {
            this.name = name;
        }

        /**
         * The host, with an optional port.
         *
         * @return the host
         */
        public @Nullable String getHost() {
            return host;
        }

        /**
         * Sets the host, with an optional port.
         *
         * @param host the host
         */
        public void setHost(@Nullable String host) {
            this.host = host;
        }

        /**
         * The path pattern.
         *
         * @return the pattern
         */
        public String getPath() {
            return path;
        }

        /**
         * Sets the path pattern.
         *
         * @param path the pattern
         */
        public void setPath(String path) {
            this.path = path;
        }

        /**
         * The HTTP methods.
         *
         * @return the methods, empty for all
         */
        public List<String> getMethods() {
            return methods;
        }

        /**
         * Sets the HTTP methods.
         *
         * @param methods the methods, empty for all
         */
        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        /**
         * The key expression.
         *
         * @return the expression, empty for one shared key
         */
        public String getKey() {
            return key;
        }

        /**
         * Sets the key expression.
         *
         * @param key the expression
         */
        public void setKey(String key) {
            this.key = key;
        }

        /**
         * The plan expression.
         *
         * @return the expression, empty for the default tiers
         */
        public String getPlan() {
            return plan;
        }

        /**
         * Sets the plan expression.
         *
         * @param plan the expression
         */
        public void setPlan(String plan) {
            this.plan = plan;
        }

        /**
         * The tiers.
         *
         * @return the tiers
         */
        public List<TierProperties> getTiers() {
            return tiers;
        }

        /**
         * Sets the tiers.
         *
         * @param tiers the tiers
         */
        public void setTiers(List<TierProperties> tiers) {
            this.tiers = tiers;
        }

        /**
         * What a request that does not fit does.
         *
         * @return wait or reject
         */
        public OnLimit getOnLimit() {
            return onLimit;
        }

        /**
         * Sets what a request that does not fit does.
         *
         * @param onLimit wait or reject
         */
        public void setOnLimit(OnLimit onLimit) {
            this.onLimit = onLimit;
        }

        /**
         * The longest wait for a permit.
         *
         * @return the wait
         */
        public Duration getMaxWait() {
            return maxWait;
        }

        /**
         * Sets the longest wait for a permit.
         *
         * @param maxWait the wait
         */
        public void setMaxWait(Duration maxWait) {
            this.maxWait = maxWait;
        }

        /**
         * Whether the partner's answers drive the limit.
         *
         * @return the flag
         */
        public boolean isAdapt() {
            return adapt;
        }

        /**
         * Sets whether the partner's answers drive the limit.
         *
         * @param adapt the flag
         */
        public void setAdapt(boolean adapt) {
            this.adapt = adapt;
        }
    }

    /** Where the aspect runs among other advice. */
    public static class Aspect {

        /**
         * The order of Sluice's advice: lower runs first (outside). Unset: the order of
         * EnableRateLimiting, which runs outside transactions and caching (a cache hit takes a
         * permit). Spring's @Retryable runs outside Sluice whatever the order, so each attempt
         * takes a permit.
         */
        private @Nullable Integer order;

        /**
         * The advice's order.
         *
         * @return the order, or null for the default
         */
        public @Nullable Integer getOrder() {
            return order;
        }

        /**
         * Sets the advice's order.
         *
         * @param order the order
         */
        public void setOrder(@Nullable Integer order) {
            this.order = order;
        }
    }

    /**
     * The keys each limiter rejects most and those that come closest to their limits, listed by
     * GET /actuator/ratelimits/{limiter}/top. Keys are personal data: the endpoint shows them
     * masked unless plain-keys is set.
     */
    public static class TopKeys {

        /** Whether limiters keep the summary at all. */
        private boolean enabled = true;

        /**
         * The counters each of a limiter's two lists keeps: any key taking more than 1/capacity
         * of the counted calls is listed. Each counter holds one key of at most 128 characters.
         */
        private int capacity = dev.sluice.TopKeys.DEFAULT_CAPACITY;

        /**
         * Whether the endpoint shows keys as they are. Keys are phone numbers, addresses and the
         * like: set it only where whoever reads the endpoint may see them.
         */
        private boolean plainKeys;

        /**
         * The secret of the HMAC-SHA-256 that masks keys, at least 16 bytes, the same on every
         * instance so that one key has one mask across a fleet. Unset: sluice.redis.key-hash-secret
         * if set, else a secret drawn at start-up (masks then differ between instances and restarts).
         */
        private @Nullable String maskSecret;

        /**
         * Whether limiters keep the summary.
         *
         * @return the flag
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Turns the summary on or off.
         *
         * @param enabled the flag
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The counters of each list.
         *
         * @return the capacity
         */
        public int getCapacity() {
            return capacity;
        }

        /**
         * Sets the counters of each list.
         *
         * @param capacity at least 1
         */
        public void setCapacity(int capacity) {
            this.capacity = capacity;
        }

        /**
         * Whether the endpoint shows keys as they are.
         *
         * @return the flag
         */
        public boolean isPlainKeys() {
            return plainKeys;
        }

        /**
         * Shows keys as they are, or masked.
         *
         * @param plainKeys the flag
         */
        public void setPlainKeys(boolean plainKeys) {
            this.plainKeys = plainKeys;
        }

        /**
         * The secret that masks keys.
         *
         * @return the secret, or null for the default
         */
        public @Nullable String getMaskSecret() {
            return maskSecret;
        }

        /**
         * Sets the secret that masks keys.
         *
         * @param maskSecret at least 16 bytes
         */
        public void setMaskSecret(@Nullable String maskSecret) {
            this.maskSecret = maskSecret;
        }
    }

    /**
     * Which exceptions of the store count as outages: they open the Redis store's circuit breaker
     * and take the failure policy. Other exceptions reach the caller. As Resilience4j's
     * record-exceptions and ignore-exceptions; StoreUnavailableException is always an outage.
     */
    public static class CircuitBreaker {

        /**
         * The exceptions that are outages, with their subclasses, unless ignored. Unset: every
         * Exception.
         */
        private @Nullable List<Class<? extends Throwable>> recordExceptions;

        /**
         * The exceptions that are never outages, with their subclasses: they reach the caller.
         * Unset: NullPointerException, IllegalArgumentException, IllegalStateException,
         * UnsupportedOperationException and ClassCastException, which a list given replaces.
         */
        private @Nullable List<Class<? extends Throwable>> ignoreExceptions;

        /**
         * The exceptions that are outages.
         *
         * @return the classes, or null for every exception
         */
        public @Nullable List<Class<? extends Throwable>> getRecordExceptions() {
            return recordExceptions;
        }

        /**
         * Sets the exceptions that are outages.
         *
         * @param recordExceptions the classes
         */
        public void setRecordExceptions(@Nullable List<Class<? extends Throwable>> recordExceptions) {
            this.recordExceptions = recordExceptions;
        }

        /**
         * The exceptions that are never outages.
         *
         * @return the classes, or null for programming errors
         */
        public @Nullable List<Class<? extends Throwable>> getIgnoreExceptions() {
            return ignoreExceptions;
        }

        /**
         * Sets the exceptions that are never outages.
         *
         * @param ignoreExceptions the classes
         */
        public void setIgnoreExceptions(@Nullable List<Class<? extends Throwable>> ignoreExceptions) {
            this.ignoreExceptions = ignoreExceptions;
        }
    }

    /**
     * One configured tier: a rate, with limit and window required; or a limit on calls running at
     * once, with concurrency (and optionally lease) in their place.
     */
    public static class TierProperties {

        /** At most this many calls of a key running at once, in place of limit and window. */
        private @Nullable Long concurrency;

        /**
         * With concurrency: how long a shared store keeps a permit whose holder stopped renewing
         * it (its instance died or stopped answering); unset, 30s.
         */
        private @Nullable Duration lease;

        /** Permits per window (for TOKEN_BUCKET, the capacity). */
        private @Nullable Long limit;

        /** The window, such as 10s, 1m or PT1H (for TOKEN_BUCKET, the time to refill). */
        private @Nullable Duration window;

        /** How calls are counted; unset, a sliding window, or a sliding log in client rules. */
        private @Nullable Algorithm algorithm;

        /** Whether calls rejected by any tier count against this one. */
        private boolean countRejected;

        /** After this tier rejects a call, reject the key for this long. */
        private Duration blockFor = Duration.ZERO;

        /**
         * At most this many calls running at once.
         *
         * @return the concurrency, or null for a rate tier
         */
        public @Nullable Long getConcurrency() {
            return concurrency;
        }

        /**
         * Sets how many calls of a key may run at once.
         *
         * @param concurrency the concurrency
         */
        public void setConcurrency(@Nullable Long concurrency) {
            this.concurrency = concurrency;
        }

        /**
         * The lease of a concurrency tier.
         *
         * @return the lease, or null for the default
         */
        public @Nullable Duration getLease() {
            return lease;
        }

        /**
         * Sets the lease of a concurrency tier.
         *
         * @param lease the lease
         */
        public void setLease(@Nullable Duration lease) {
            this.lease = lease;
        }

        /**
         * Permits per window.
         *
         * @return the limit, or null when not set
         */
        public @Nullable Long getLimit() {
            return limit;
        }

        /**
         * Sets permits per window.
         *
         * @param limit the limit
         */
        public void setLimit(@Nullable Long limit) {
            this.limit = limit;
        }

        /**
         * The window.
         *
         * @return the window, or null when not set
         */
        public @Nullable Duration getWindow() {
            return window;
        }

        /**
         * Sets the window.
         *
         * @param window the window
         */
        public void setWindow(@Nullable Duration window) {
            this.window = window;
        }

        /**
         * How calls are counted.
         *
         * @return the algorithm, or null for the default of where the tier is
         */
        public @Nullable Algorithm getAlgorithm() {
            return algorithm;
        }

        /**
         * Sets how calls are counted.
         *
         * @param algorithm the algorithm, or null for the default of where the tier is
         */
        public void setAlgorithm(@Nullable Algorithm algorithm) {
            this.algorithm = algorithm;
        }

        /**
         * Whether rejected calls count.
         *
         * @return the flag
         */
        public boolean isCountRejected() {
            return countRejected;
        }

        /**
         * Sets whether rejected calls count.
         *
         * @param countRejected the flag
         */
        public void setCountRejected(boolean countRejected) {
            this.countRejected = countRejected;
        }

        /**
         * How long a rejection blocks the key.
         *
         * @return the block; zero for none
         */
        public Duration getBlockFor() {
            return blockFor;
        }

        /**
         * Sets how long a rejection blocks the key.
         *
         * @param blockFor the block
         */
        public void setBlockFor(Duration blockFor) {
            this.blockFor = blockFor;
        }
    }
}
