package dev.sluice.benchmarks;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * How a peer library's limiters are kept per key in the JMH benchmarks, as an application
 * without Sluice would keep them: for one key, the limiter itself, with no lookup; for many, a
 * {@link ConcurrentHashMap} from key to limiter, filled before the measurement and read with
 * {@code computeIfAbsent} on every call. Unbounded: unlike Sluice's store, it never forgets a key.
 *
 * @param <L> the type of limiter
 */
final class PerKey<L> {

    private final @Nullable L onlyLimiter;
    private final ConcurrentHashMap<String, L> limiters = new ConcurrentHashMap<>();
    private final Function<String, L> newLimiter;

    /**
     * Makes a limiter for every key.
     *
     * @param keys       the keys calls will be made for, at least one
     * @param newLimiter makes the limiter of a key
     */
    PerKey(String[] keys, Function<String, L> newLimiter) {
        this.newLimiter = newLimiter;
        this.onlyLimiter = keys.length == 1 ? newLimiter.apply(keys[0]) : null;
        if (onlyLimiter == null) {
            for (String key : keys) {
                limiters.put(key, newLimiter.apply(key));
            }
        }
    }

    /** The limiter of a key. */
    L get(String key) {
        return onlyLimiter != null ? onlyLimiter : limiters.computeIfAbsent(key, newLimiter);
    }
}
