package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Every limiter of an application by name, and the settings they are built with: one store, one
 * clock, one sleeper, one default failure policy and local fallback store, and the listeners
 * (metrics, statistics) every limiter reports to. Annotated methods, configured HTTP rules and
 * limiters built in code all live here, so that whatever reads the registry (metrics, the
 * actuator endpoint, live changes) treats them alike.
 *
 * <pre class="code">
 * RateLimiterRegistry registry = RateLimiterRegistry.builder().store(store).build();
 * RateLimiter partner = registry.limiterBuilder()
 *         .name("partner-api")
 *         .tier(Tier.of(100, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET))
 *         .build();                                  // registered under its name
 * registry.find("partner-api").orElseThrow().changeTiers(List.of(
 *         Tier.of(200, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET)));   // live, counts kept
 * </pre>
 *
 * <p>A name belongs to one limiter. Registering a definition under a name taken by an equal
 * definition (two methods sharing a named limiter) returns the limiter already there; anything
 * else under a taken name is refused. Thread-safe.
 */
public final class RateLimiterRegistry {

    private final RateLimitStore store;
    private final Function<String, @Nullable RateLimitStore> limiterStores;
    private final InstantSource clock;
    private final Sleeper sleeper;
    private final FailurePolicy onStoreFailure;
    private final @Nullable StoreFailureFilter failures;
    private final RateLimitStore fallbackStore;
    private final List<RateLimitListener> listeners;
    private final Map<String, Registered> limiters = new ConcurrentSkipListMap<>();

    private RateLimiterRegistry(Builder builder) {
        this.clock = builder.clock;
        this.store = builder.store != null ? builder.store : InMemoryRateLimitStore.builder().clock(clock).build();
        this.limiterStores = builder.limiterStores;
        this.sleeper = builder.sleeper;
        this.onStoreFailure = builder.onStoreFailure;
        this.failures = builder.failures;
        this.fallbackStore = builder.fallbackStore != null ? builder.fallbackStore
                : InMemoryRateLimitStore.builder().clock(clock).build();
        this.listeners = List.copyOf(builder.listeners);
    }

    /**
     * Starts a registry; every setting has a default.
     *
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** A limiter and the definition it was registered with, if any. */
    private record Registered(RateLimiter limiter, @Nullable LimitDefinition definition) {
    }

    /**
     * A limiter builder with this registry's store (for the limiter's name), clock, sleeper, failure policy, fallback
     * store and listeners, each of which may still be changed; the limiter it builds is
     * registered here.
     *
     * @return the builder; give it a name and tiers
     */
    public RateLimiter.Builder limiterBuilder() {
        return preset(new RateLimiter.Builder(this));
    }

    /**
     * The limiter a definition describes, built with this registry's settings and registered;
     * or the one registered already under its name, if that was registered with an equal
     * definition (key, cost, plan and key-error policy aside, which belong to each caller).
     *
     * @param definition the definition
     * @return the registered limiter
     * @throws IllegalArgumentException when the limiter cannot be built, or its name is taken
     *         by a different limiter
     */
    public RateLimiter register(LimitDefinition definition) {
        synchronized (limiters) {
            Registered existing = limiters.get(definition.name());
            if (existing != null && existing.definition != null && sameLimiter(existing.definition, definition)) {
                return existing.limiter;
            }
            RateLimiter limiter = preset(RateLimiter.builder()).store(storeOf(definition.name())).definition(definition)
                    .build();
            add(limiter, definition);
            return limiter;
        }
    }

    /** Registers a built limiter; fails when its name is taken. */
    void add(RateLimiter limiter, @Nullable LimitDefinition definition) {
        synchronized (limiters) {
            Registered existing = limiters.get(limiter.name());
            if (existing != null) {
                throw new IllegalArgumentException("a rate limiter named '" + limiter.name() + "' is registered"
                        + " already, " + (existing.definition != null && definition != null
                        ? "with other settings (" + existing.limiter + ")" : "") + "; give each limiter its own name");
            }
            limiters.put(limiter.name(), new Registered(limiter, definition));
        }
    }

    private static boolean sameLimiter(LimitDefinition one, LimitDefinition other) {
        return one.tiers().equals(other.tiers()) && one.plans().equals(other.plans())
                && Objects.equals(one.fixedCost(), other.fixedCost()) && one.onLimit() == other.onLimit()
                && one.maxWait().equals(other.maxWait()) && one.message().equals(other.message())
                && one.onStoreFailure() == other.onStoreFailure();
    }

    private RateLimiter.Builder preset(RateLimiter.Builder builder) {
        // The store depends on the limiter's name: see storeOf.
        builder.clock(clock).sleeper(sleeper).onStoreFailure(onStoreFailure).failures(failures)
                .fallbackStore(fallbackStore);
        listeners.forEach(builder::listener);
        return builder;
    }

    /**
     * Removes a limiter, so that its name is free again: how a limiter defined at run time (a
     * gateway route's) goes when its definition does. Callers holding it still decide with it.
     *
     * @param name the limiter's name
     * @return the removed limiter, or empty when none had the name
     */
    public Optional<RateLimiter> remove(String name) {
        synchronized (limiters) {
            Registered removed = limiters.remove(name);
            return removed == null ? Optional.empty() : Optional.of(removed.limiter);
        }
    }

    /**
     * The limiter of a name.
     *
     * @param name the limiter's name
     * @return the limiter, or empty when none has the name
     */
    public Optional<RateLimiter> find(String name) {
        Registered registered = limiters.get(name);
        return registered == null ? Optional.empty() : Optional.of(registered.limiter);
    }

    /**
     * Every registered limiter.
     *
     * @return the limiters, ordered by name
     */
    public Collection<RateLimiter> limiters() {
        List<RateLimiter> all = new ArrayList<>();
        limiters.values().forEach(registered -> all.add(registered.limiter));
        return List.copyOf(all);
    }

    /**
     * The store limiters built here decide with.
     *
     * @return the store
     */
    public RateLimitStore store() {
        return store;
    }

    /**
     * The store a limiter of this name built here decides with: its own, where the registry was
     * given {@linkplain Builder#limiterStores one for it}, otherwise {@link #store()}.
     *
     * @param limiterName the limiter's name
     * @return the store
     */
    public RateLimitStore storeOf(String limiterName) {
        RateLimitStore own = limiterStores.apply(limiterName);
        return own != null ? own : store;
    }

    /**
     * The store limiters built here fall back to under {@link FailurePolicy#LOCAL_FALLBACK}.
     *
     * @return the fallback store
     */
    public RateLimitStore fallbackStore() {
        return fallbackStore;
    }

    /**
     * The listeners every limiter built here reports to.
     *
     * @return the listeners, unmodifiable
     */
    public List<RateLimitListener> listeners() {
        return listeners;
    }

    /**
     * The clock limiters built here measure waits with.
     *
     * @return the clock
     */
    public InstantSource clock() {
        return clock;
    }

    /** Configures a {@link RateLimiterRegistry}. Not thread-safe; build once. */
    public static final class Builder {

        private @Nullable RateLimitStore store;
        private Function<String, @Nullable RateLimitStore> limiterStores = name -> null;
        private InstantSource clock = MonotonicClock.system();
        private Sleeper sleeper = Sleeper.system();
        private FailurePolicy onStoreFailure = FailurePolicy.LOCAL_FALLBACK;
        private @Nullable StoreFailureFilter failures;
        private @Nullable RateLimitStore fallbackStore;
        private final List<RateLimitListener> listeners = new ArrayList<>();

        private Builder() {
        }

        /**
         * Where counts are kept.
         *
         * @param store default: an {@link InMemoryRateLimitStore} reading this builder's clock
         * @return this builder
         */
        public Builder store(RateLimitStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * Stores of their own for some limiters, by name: for instance
         * {@link LocalSyncRateLimitStore local counting} for the hottest ones only. A limiter
         * built here whose name this maps to no store, and that was not given one of its own,
         * decides with {@linkplain #store(RateLimitStore) the registry's store}.
         *
         * @param limiterStores a limiter's name to its store, or to {@code null}; default none
         * @return this builder
         */
        public Builder limiterStores(Function<String, @Nullable RateLimitStore> limiterStores) {
            this.limiterStores = Objects.requireNonNull(limiterStores, "limiterStores");
            return this;
        }

        /**
         * The store given so far, for a customizer that wraps it.
         *
         * @return the store, or {@code null} for the default
         */
        public @Nullable RateLimitStore store() {
            return store;
        }

        /**
         * The clock measuring waits (and, for the default stores, deciding).
         *
         * @param clock default the system clock's time at start, counted on by the JVM's monotonic timer
         *              (no step of the system clock reaches it)
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * How {@code WAIT} limits wait.
         *
         * @param sleeper default {@link Sleeper#system()}
         * @return this builder
         */
        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
            return this;
        }

        /**
         * What a limiter's calls do when the store cannot decide them, unless its definition
         * says otherwise.
         *
         * @param onStoreFailure default {@link FailurePolicy#LOCAL_FALLBACK}
         * @return this builder
         */
        public Builder onStoreFailure(FailurePolicy onStoreFailure) {
            this.onStoreFailure = Objects.requireNonNull(onStoreFailure, "onStoreFailure");
            return this;
        }

        /**
         * The exceptions of the store that are outages for every limiter built here, as
         * {@link RateLimiter.Builder#recordExceptions}.
         *
         * @param classes the exceptions that are outages; default every {@link Exception}
         * @return this builder
         */
        @SafeVarargs
        public final Builder recordExceptions(Class<? extends Throwable>... classes) {
            this.failures = failures().recordExceptions(classes);
            return this;
        }

        /**
         * Which exceptions of the store are outages for every limiter built here, as
         * {@link RateLimiter.Builder#recordException}.
         *
         * @param predicate true for an outage
         * @return this builder
         */
        public Builder recordException(Predicate<Throwable> predicate) {
            this.failures = failures().recordException(predicate);
            return this;
        }

        /**
         * The exceptions of the store that are never outages for the limiters built here, as
         * {@link RateLimiter.Builder#ignoreExceptions}.
         *
         * @param classes the exceptions; default the programming errors, which they replace
         * @return this builder
         */
        @SafeVarargs
        public final Builder ignoreExceptions(Class<? extends Throwable>... classes) {
            this.failures = failures().ignoreExceptions(classes);
            return this;
        }

        /**
         * Which exceptions of the store are never outages for the limiters built here, as
         * {@link RateLimiter.Builder#ignoreException}.
         *
         * @param predicate true for an exception that reaches the caller
         * @return this builder
         */
        public Builder ignoreException(Predicate<Throwable> predicate) {
            this.failures = failures().ignoreException(predicate);
            return this;
        }

        private StoreFailureFilter failures() {
            return failures != null ? failures : StoreFailureFilter.DEFAULT;
        }

        /**
         * The store every limiter falls back to under {@link FailurePolicy#LOCAL_FALLBACK};
         * keys are qualified by each limiter's name.
         *
         * @param fallbackStore default: one {@link InMemoryRateLimitStore} on this builder's
         *                      clock, shared by all limiters
         * @return this builder
         */
        public Builder fallbackStore(RateLimitStore fallbackStore) {
            this.fallbackStore = Objects.requireNonNull(fallbackStore, "fallbackStore");
            return this;
        }

        /**
         * Adds a listener every limiter built here reports its outcomes, store failures, waits
         * and unknown plans to.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(RateLimitListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Builds the registry.
         *
         * @return an empty registry
         */
        public RateLimiterRegistry build() {
            return new RateLimiterRegistry(this);
        }
    }
}
