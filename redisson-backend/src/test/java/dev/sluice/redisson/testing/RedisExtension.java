package dev.sluice.redisson.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives tests a real Redis: a parameter of type {@link RedisServer} receives a standalone
 * server, one of type {@link RedisCluster} a three-master cluster. Each is started once for the
 * whole test run, on free loopback ports, and stopped when the run ends. Tests that kill or
 * restart a server leave it running again, or start one of their own.
 *
 * <pre class="code">
 * &#64;ExtendWith(RedisExtension.class)
 * class MyRedisTest {
 *     &#64;Test
 *     void works(RedisServer redis) { ... }
 * }
 * </pre>
 */
public final class RedisExtension implements ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RedisExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == RedisServer.class || type == RedisCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        ExtensionContext.Store store = context.getRoot().getStore(NAMESPACE);
        return parameter.getParameter().getType() == RedisServer.class
                ? store.computeIfAbsent(RedisServer.class, type -> RedisServer.start(), RedisServer.class)
                : store.computeIfAbsent(RedisCluster.class, type -> RedisCluster.start(), RedisCluster.class);
    }
}
