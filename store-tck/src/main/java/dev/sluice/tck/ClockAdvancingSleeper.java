package dev.sluice.tck;

import dev.sluice.Sleeper;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link Sleeper} for tests: it waits by moving a {@link MutableClock} forward, at once, and
 * records every wait, so that a test of waiting limiters neither sleeps nor guesses.
 *
 * <pre class="code">
 * MutableClock clock = new MutableClock(Instant.parse("2030-01-01T00:00:00Z"));
 * ClockAdvancingSleeper sleeper = new ClockAdvancingSleeper(clock);
 * RateLimiter limiter = RateLimiter.builder().clock(clock).sleeper(sleeper)...build();
 * limiter.acquire("key");
 * assertThat(sleeper.sleeps()).containsExactly(Duration.ofSeconds(1));
 * </pre>
 */
public class ClockAdvancingSleeper implements Sleeper {

    private final MutableClock clock;
    private final List<Duration> sleeps = new CopyOnWriteArrayList<>();

    /**
     * A sleeper moving the given clock.
     *
     * @param clock the clock every wait moves forward
     */
    public ClockAdvancingSleeper(MutableClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public void sleep(Duration duration) {
        sleeps.add(duration);
        clock.advance(duration);
    }

    /** Waits as {@link #sleep} does, and completes at once. */
    @Override
    public CompletionStage<Void> sleepAsync(Duration duration) {
        sleep(duration);
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Every wait so far, in order.
     *
     * @return the waits, a live view
     */
    public List<Duration> sleeps() {
        return sleeps;
    }
}
