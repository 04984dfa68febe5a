package dev.sluice.boot.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Holds start-up until the store has connected to Redis and loaded its script, for at most
 * {@code sluice.redis.warm-up-timeout}, so that the first requests pay for neither. It waits once
 * every singleton is made, before the context starts its lifecycle beans: the web server takes
 * no request, and the application reports neither started nor ready, until the store is warm or
 * the timeout is over. The warm-up itself began when the store was made, so it overlaps the rest
 * of start-up.
 *
 * <p>A store that cannot be reached in time is not an error: a warning names what failed, and
 * start-up goes on. The store connects with its first decisions, which follow the failure policy
 * until it does.
 */
final class StoreWarmUp implements SmartInitializingSingleton {

    private static final System.Logger LOGGER = System.getLogger(StoreWarmUp.class.getName());

    private final Duration timeout;
    private volatile @Nullable String store;
    private volatile @Nullable CompletableFuture<?> warmUp;

    /**
     * A warm-up not yet started.
     *
     * @param timeout the longest start-up waits; zero not to wait
     * @throws SluiceConfigurationException when the timeout is negative
     */
    StoreWarmUp(Duration timeout) {
        if (timeout.isNegative()) {
            throw new SluiceConfigurationException("sluice.redis.warm-up-timeout is negative: " + timeout,
                    "Set sluice.redis.warm-up-timeout to how long start-up may wait for Redis, such as 5s, or to 0s"
                            + " not to wait.", null);
        }
        this.timeout = timeout;
    }

    /**
     * The warm-up of the store, begun as it was made, which start-up waits for.
     *
     * @param store  the store, for log lines
     * @param warmUp completes once the store is warm
     */
    void started(String store, CompletionStage<?> warmUp) {
        this.store = store;
        this.warmUp = warmUp.toCompletableFuture();
    }

    @Override
    public void afterSingletonsInstantiated() {
        CompletableFuture<?> started = warmUp;
        if (started == null || timeout.isZero()) {
            return;
        }
        try {
            started.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOGGER.log(System.Logger.Level.WARNING, () -> store + " did not connect to Redis and load its script within "
                    + timeout.toMillis() + " ms (sluice.redis.warm-up-timeout). The application starts anyway: the"
                    + " store goes on connecting with its first decisions, which follow the failure policy until it"
                    + " does.");
        } catch (ExecutionException e) {
            Throwable failure = e.getCause() != null ? e.getCause() : e;
            LOGGER.log(System.Logger.Level.WARNING, () -> store + " could not connect to Redis and load its script: "
                    + (failure.getMessage() != null ? failure.getMessage() : failure.getClass().getName())
                    + ". The application starts anyway: the store connects with its first decisions, which follow the"
                    + " failure policy until it does.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
