package dev.sluice.tck;

import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.RateLimitStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Test helpers for any {@link RateLimitStore}.
 *
 * <p>Forgetting every key of a store is for tests only: on a Redis store it scans the whole
 * keyspace. So it is not part of {@link RateLimitStore}, where any code holding a store could
 * call it; stores offer it as a public {@code clear()} of their own
 * ({@code InMemoryRateLimitStore}, {@code RedissonRateLimitStore}, {@code Bucket4jRedissonStore}),
 * and {@link #clear} finds it. A store of your own gets test support's fresh counts the same way:
 * give it a public {@code void clear()}.
 */
public final class RateLimitStores {

    private RateLimitStores() {
    }

    /**
     * Forgets every key of a store, as {@code @AutoConfigureSluiceTest} does before each test:
     * calls the public {@code clear()} of the store beneath any
     * {@linkplain ForwardingRateLimitStore decorators}.
     *
     * @param store the store, possibly decorated
     * @throws UnsupportedOperationException when the store has no public {@code clear()}
     */
    public static void clear(RateLimitStore store) {
        RateLimitStore beneath = ForwardingRateLimitStore.beneath(store);
        Method clear;
        try {
            clear = beneath.getClass().getMethod("clear");
        } catch (NoSuchMethodException e) {
            throw new UnsupportedOperationException(beneath.getClass().getName()
                    + " cannot clear its keys: it has no public clear()", e);
        }
        // A public method of a class that is not public itself (a test's own store, say).
        clear.trySetAccessible();
        try {
            clear.invoke(beneath);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(beneath.getClass().getName() + ".clear() failed", e.getCause());
        } catch (IllegalAccessException e) {
            throw new UnsupportedOperationException(beneath.getClass().getName()
                    + " cannot clear its keys: its clear() cannot be called from here", e);
        }
    }
}
