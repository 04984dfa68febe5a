package dev.sluice.boot;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Where the Redisson client that Sluice makes for itself connects: {@code sluice.redis.*} when
 * it names an address or cluster nodes, otherwise the Redis the application already uses,
 * configured the Spring Boot way under {@code spring.data.redis.*} (by default localhost:6379).
 *
 * @param nodes    cluster node addresses; empty for a single server
 * @param address  the single server's address, when there are no nodes
 * @param username the user name, or null
 * @param password the password, or null
 * @param database the database of a single server
 */
record RedisConnection(List<String> nodes, String address, @Nullable String username, @Nullable String password,
                       int database) {

    private static final String BOOT = "spring.data.redis.";

    static RedisConnection of(SluiceProperties.Redis sluice, Environment environment) {
        String address = sluice.getAddress();
        if (address != null || !sluice.getNodes().isEmpty()) {
            return new RedisConnection(sluice.getNodes(), address == null ? "" : address, sluice.getUsername(),
                    sluice.getPassword(), 0);
        }
        Binder boot = Binder.get(environment);
        String scheme = boot.bind(BOOT + "ssl.enabled", Boolean.class).orElse(false) ? "rediss://" : "redis://";
        List<String> nodes = boot.bind(BOOT + "cluster.nodes", Bindable.listOf(String.class)).orElse(List.of())
                .stream().map(node -> scheme + node).toList();
        String single = boot.bind(BOOT + "url", String.class).orElseGet(() -> scheme
                + boot.bind(BOOT + "host", String.class).orElse("localhost") + ":"
                + boot.bind(BOOT + "port", Integer.class).orElse(6379));
        String username = sluice.getUsername();
        String password = sluice.getPassword();
        return new RedisConnection(nodes, single,
                username != null ? username : boot.bind(BOOT + "username", String.class).orElse(null),
                password != null ? password : boot.bind(BOOT + "password", String.class).orElse(null),
                boot.bind(BOOT + "database", Integer.class).orElse(0));
    }
}
