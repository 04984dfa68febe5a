package dev.sluice.boot.autoconfigure;

import dev.sluice.CountSyncStore;
import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.config.RateLimiterRegistryCustomizer;
import java.time.InstantSource;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The limiters that count in this JVM and sync with Redis ({@code sluice.redis.local-sync.*}
 * and {@code sluice.limits.<name>.local-sync}), and the one {@link LocalSyncRateLimitStore} they
 * share, which syncs what is left when the application stops.
 *
 * <p>Public for the metrics auto-configuration, in its own package, which measures the syncs of
 * the shared {@link #store()}.
 */
public final class LocalSyncLimiters implements RateLimiterRegistryCustomizer, DisposableBean {

    private final SluiceProperties properties;
    private final LocalSyncRateLimitStore store;

    LocalSyncLimiters(CountSyncStore redis, SluiceProperties properties, InstantSource clock) {
        this.properties = properties;
        SluiceProperties.LocalSync settings = properties.getRedis().getLocalSync();
        this.store = LocalSyncRateLimitStore.builder(redis)
                .interval(settings.getInterval())
                .maximumKeys(settings.getMaximumKeys())
                .clock(clock)
                .build();
    }

    /** Matches when local counting is on for every limiter or for at least one. */
    static final class Configured extends SpringBootCondition {

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            Binder binder = Binder.get(context.getEnvironment());
            if (binder.bind("sluice.redis.local-sync.enabled", Boolean.class).orElse(false)) {
                return ConditionOutcome.match("sluice.redis.local-sync.enabled is true");
            }
            // Only each limit's local-sync flag: the rest of sluice.limits is bound and checked elsewhere.
            Map<String, LocalSyncFlag> limits = binder.bind("sluice.limits",
                    Bindable.mapOf(String.class, LocalSyncFlag.class)).orElse(Map.of());
            return limits.values().stream().anyMatch(limit -> Boolean.TRUE.equals(limit.getLocalSync()))
                    ? ConditionOutcome.match("a limiter's sluice.limits.<name>.local-sync is true")
                    : ConditionOutcome.noMatch("no limiter counts locally");
        }
    }

    /** The local-sync flag of one {@code sluice.limits} entry. */
    public static final class LocalSyncFlag {

        private @Nullable Boolean localSync;

        /**
         * The flag.
         *
         * @return whether the limiter counts locally, or null
         */
        public @Nullable Boolean getLocalSync() {
            return localSync;
        }

        /**
         * Sets the flag.
         *
         * @param localSync the flag
         */
        public void setLocalSync(@Nullable Boolean localSync) {
            this.localSync = localSync;
        }
    }

    @Override
    public void customize(RateLimiterRegistry.Builder registry) {
        registry.limiterStores(this::storeOf);
    }

    private @Nullable LocalSyncRateLimitStore storeOf(String limiterName) {
        SluiceProperties.Limit limit = properties.getLimits().get(limiterName);
        Boolean own = limit == null ? null : limit.getLocalSync();
        return (own != null ? own : properties.getRedis().getLocalSync().isEnabled()) ? store : null;
    }

    /**
     * The store the limiters share.
     *
     * @return the store
     */
    public LocalSyncRateLimitStore store() {
        return store;
    }

    @Override
    public void destroy() {
        store.close();
    }
}
