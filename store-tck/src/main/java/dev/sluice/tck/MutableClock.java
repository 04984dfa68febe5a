package dev.sluice.tck;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that stands still until a test moves it. Thread-safe.
 *
 * <pre class="code">
 * MutableClock clock = new MutableClock(Instant.parse("2150-01-01T00:00:00Z"));
 * RateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
 * clock.advance(Duration.ofSeconds(30));
 * </pre>
 *
 * <p>Every change goes through {@link #set(Instant)}, so a subclass can carry the time
 * elsewhere too, for instance to a server whose clock the store reads.
 */
public class MutableClock implements InstantSource {

    private final AtomicReference<Instant> now;

    /**
     * A clock showing {@code start}.
     *
     * @param start the initial time
     */
    public MutableClock(Instant start) {
        this.now = new AtomicReference<>(Objects.requireNonNull(start, "start"));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    /**
     * Shows {@code instant} from now on.
     *
     * @param instant the new time; it may be earlier than the current one
     */
    public void set(Instant instant) {
        now.set(Objects.requireNonNull(instant, "instant"));
    }

    /**
     * Moves the clock forward.
     *
     * @param duration how far; not negative
     */
    public void advance(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("a clock advances by a positive duration, was " + duration);
        }
        set(instant().plus(duration));
    }

    /**
     * Moves the clock forward by whole milliseconds.
     *
     * @param millis how far; not negative
     */
    public void advanceMillis(long millis) {
        advance(Duration.ofMillis(millis));
    }

    /**
     * Moves the clock to the start of the next window of this length, counted from the epoch as
     * the stores align them; stays put when already there.
     *
     * @param window the window length
     */
    public void alignTo(Duration window) {
        long now = instant().toEpochMilli();
        long length = window.toMillis();
        long start = Math.floorDiv(now + length - 1, length) * length;
        set(Instant.ofEpochMilli(start));
    }

    @Override
    public String toString() {
        return "MutableClock[" + instant() + "]";
    }
}
