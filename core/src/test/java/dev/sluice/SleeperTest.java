package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Where an asynchronous wait continues the caller's work. */
class SleeperTest {

    @Test
    void anAsynchronousWaitEndsOnSluicesOwnThreadsNeverOnTheCommonPool() throws Exception {
        String continuedOn = null;
        // A continuation attached after the wait ended would run on this thread: try again then.
        for (int attempt = 0; continuedOn == null && attempt < 10; attempt++) {
            CompletableFuture<Void> wait = Sleeper.system().sleepAsync(Duration.ofMillis(200)).toCompletableFuture();
            CompletableFuture<String> thread = wait.thenApply(done -> Thread.currentThread().getName());
            if (!Thread.currentThread().getName().equals(thread.get(10, TimeUnit.SECONDS))) {
                continuedOn = thread.get();
            }
        }
        assertThat(continuedOn).startsWith("sluice-wait-");
    }
}
