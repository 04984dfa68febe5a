package dev.sluice.boot.autoconfigure;

import dev.sluice.redisson.RedissonClientConfigs;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.redisson.config.BaseConfig;
import org.redisson.config.Config;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Where and how the Redisson client that Sluice makes for itself connects: {@code sluice.redis.*}
 * when it names an address or cluster nodes, otherwise the Redis the application already uses,
 * configured the Spring Boot way under {@code spring.data.redis.*} (a single server by default
 * localhost:6379, a cluster, or a master behind Sentinel).
 *
 * <p>The client connects lazily, so the application starts while Redis is down, and never
 * retries a command: the store sends each decision once. How long a decision may take is the
 * store's, from {@code sluice.redis.timeout} or, for this client, {@code spring.data.redis.timeout}.
 */
final class RedisConnection {

    private static final String BOOT = "spring.data.redis.";

    private RedisConnection() {
    }

    /**
     * The configuration of Sluice's own client.
     *
     * @param sluice      the {@code sluice.redis.*} settings
     * @param environment for {@code spring.data.redis.*}
     * @return the configuration, ready for {@code Redisson.create}
     */
    static Config config(SluiceProperties.Redis sluice, Environment environment) {
        Binder boot = Binder.get(environment);
        Config config;
        BaseConfig<?> connection;
        String username = sluice.getUsername();
        String password = sluice.getPassword();
        if (sluice.getAddress() != null || !sluice.getNodes().isEmpty()) {
            if (sluice.getNodes().isEmpty()) {
                config = RedissonClientConfigs.singleServer(sluice.getAddress());
                connection = config.useSingleServer();
            } else {
                config = RedissonClientConfigs.cluster(sluice.getNodes());
                connection = config.useClusterServers();
            }
        } else {
            String scheme = boot.bind(BOOT + "ssl.enabled", Boolean.class).orElse(false) ? "rediss://" : "redis://";
            List<String> clusterNodes = boot.bind(BOOT + "cluster.nodes", Bindable.listOf(String.class)).orElse(List.of());
            Optional<String> sentinelMaster = optional(boot.bind(BOOT + "sentinel.master", String.class));
            int database = boot.bind(BOOT + "database", Integer.class).orElse(0);
            if (sentinelMaster.isPresent()) {
                config = RedissonClientConfigs.sentinel(sentinelMaster.get(),
                        boot.bind(BOOT + "sentinel.nodes", Bindable.listOf(String.class)).orElse(List.of()).stream()
                                .map(node -> scheme + node).toList());
                config.useSentinelServers().setDatabase(database);
                boot.bind(BOOT + "sentinel.username", String.class).ifBound(config.useSentinelServers()::setSentinelUsername);
                boot.bind(BOOT + "sentinel.password", String.class).ifBound(config.useSentinelServers()::setSentinelPassword);
                connection = config.useSentinelServers();
            } else if (!clusterNodes.isEmpty()) {
                config = RedissonClientConfigs.cluster(clusterNodes.stream().map(node -> scheme + node).toList());
                connection = config.useClusterServers();
            } else {
                config = RedissonClientConfigs.singleServer(boot.bind(BOOT + "url", String.class).orElseGet(() -> scheme
                        + boot.bind(BOOT + "host", String.class).orElse("localhost") + ":"
                        + boot.bind(BOOT + "port", Integer.class).orElse(6379)));
                config.useSingleServer().setDatabase(database);
                connection = config.useSingleServer();
            }
            if (username == null) {
                username = boot.bind(BOOT + "username", String.class).orElse(null);
            }
            if (password == null) {
                password = boot.bind(BOOT + "password", String.class).orElse(null);
            }
            BaseConfig<?> server = connection;
            boot.bind(BOOT + "connect-timeout", Duration.class)
                    .ifBound(timeout -> server.setConnectTimeout((int) timeout.toMillis()));
        }
        // The store sets its own timeout on every decision and sends each once.
        if (username != null) {
            config.setUsername(username);
        }
        if (password != null) {
            config.setPassword(password);
        }
        config.setLazyInitialization(true);
        connection.setRetryAttempts(0);
        return config;
    }

    /**
     * How long a decision may take: {@code sluice.redis.timeout}, else, for Sluice's own client,
     * {@code spring.data.redis.timeout}.
     *
     * @param sluice      the {@code sluice.redis.*} settings
     * @param environment for {@code spring.data.redis.*}
     * @param ownClient   whether the store runs on Sluice's own client
     * @return the timeout, or empty for the store's default
     */
    static Optional<Duration> timeout(SluiceProperties.Redis sluice, Environment environment, boolean ownClient) {
        if (sluice.getTimeout() != null) {
            return Optional.of(sluice.getTimeout());
        }
        return ownClient ? optional(Binder.get(environment).bind(BOOT + "timeout", Duration.class)) : Optional.empty();
    }

    private static <T> Optional<T> optional(BindResult<T> bound) {
        return bound.isBound() ? Optional.of(bound.get()) : Optional.empty();
    }
}
