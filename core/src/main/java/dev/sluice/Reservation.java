package dev.sluice;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * What a store answers a caller that may wait up to a bound for its permit (see
 * {@link RateLimitStore#reserve}): a decision, and when it admits, how long the caller waits
 * before its permit is due. A store that reserves takes the permit at once, at a time to come,
 * so the caller sleeps {@link #delay} and then goes ahead without asking again; callers who ask
 * after it are given later times, so waiting callers are served in the order they asked.
 *
 * @param decision the decision; when it admits, the permit has been taken
 * @param delay    how long the caller waits before its permit is due: zero when it is due now,
 *                 and always zero for a rejection, whose {@link Decision#retryAfter()} says when
 *                 to ask again
 */
public record Reservation(Decision decision, Duration delay) implements Serializable {

    /**
     * Checks the figures.
     *
     * @throws IllegalArgumentException when the delay is negative, or a rejection has one
     */
    public Reservation {
        Objects.requireNonNull(decision, "decision");
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || (!decision.allowed() && !delay.isZero())) {
            throw new IllegalArgumentException("a reservation's delay is zero or more, and zero for a rejection: "
                    + delay + " for " + decision);
        }
    }

    /**
     * A decision made now: no delay.
     *
     * @param decision the decision
     * @return the reservation of a call decided now
     */
    public static Reservation now(Decision decision) {
        return new Reservation(decision, Duration.ZERO);
    }
}
