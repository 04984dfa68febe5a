package dev.sluice.boot.aot;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The Lua scripts of {@code sluice-redisson}, which {@code RedissonRateLimitStore} reads as class
 * path resources when it is built; only when the application has that module. They are
 * registered here because the Redis store itself uses no Spring.
 */
final class RedissonScriptsRuntimeHints implements RuntimeHintsRegistrar {

    /** The folder of the scripts, beside the store's class. */
    static final String SCRIPTS = "dev/sluice/redisson";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPatternIfPresent(classLoader, SCRIPTS, pattern -> pattern.includes(SCRIPTS + "/*.lua"));
    }
}
