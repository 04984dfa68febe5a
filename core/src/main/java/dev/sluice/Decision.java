package dev.sluice;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * A store's answer to one call: admitted or not, with the figures of the binding tier, which
 * the Spring Boot starter sends as rate-limit headers.
 *
 * <p>The binding tier is, for a rejected call, the rejecting tier with the longest wait; for
 * an admitted call, the tier with the fewest permits left (of those, the one that takes
 * longest to reset).
 *
 * @param allowed    whether the call was admitted (and counted)
 * @param limit      the binding tier's limit
 * @param remaining  what the binding tier still admits: after this call when admitted, now
 *                   when rejected; zero while the key is blocked
 * @param resetAfter how long until the binding tier is back to its full limit (and any block
 *                   is over); zero when it already is
 * @param retryAfter for a rejected call, the shortest wait after which the same call could
 *                   pass, assuming no other calls; zero when admitted
 * @param window     the binding tier's window, which rate-limit headers give as the policy's
 *                   {@code w}; zero when not known, and for a concurrency tier, which has none
 * @param concurrency whether the binding tier is a {@linkplain Tier#concurrency concurrency tier}:
 *                   then {@code limit} and {@code remaining} count calls running at once, and a
 *                   rejection's {@code retryAfter} is only a hint, as no store knows when a
 *                   running call ends
 */
public record Decision(boolean allowed, long limit, long remaining, Duration resetAfter, Duration retryAfter,
                       Duration window, boolean concurrency) implements Serializable {

    /**
     * Checks the figures.
     *
     * @throws IllegalArgumentException when a figure is negative, or a rejection has no wait
     */
    public Decision {
        Objects.requireNonNull(resetAfter, "resetAfter");
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(window, "window");
        if (limit <= 0 || remaining < 0 || remaining > limit) {
            throw new IllegalArgumentException("remaining must be within 0.." + limit + ", was " + remaining);
        }
        if (resetAfter.isNegative() || retryAfter.isNegative() || window.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative: " + resetAfter + ", " + retryAfter
                    + ", " + window);
        }
        if (allowed != retryAfter.isZero()) {
            throw new IllegalArgumentException(allowed
                    ? "an admitted call has no retryAfter, was " + retryAfter
                    : "a rejected call needs a positive retryAfter");
        }
    }

    /**
     * A decision whose binding tier's window is not known.
     *
     * @param allowed    whether the call was admitted (and counted)
     * @param limit      the binding tier's limit
     * @param remaining  what the binding tier still admits
     * @param resetAfter how long until the binding tier is back to its full limit
     * @param retryAfter for a rejected call, the shortest wait after which it could pass
     */
    public Decision(boolean allowed, long limit, long remaining, Duration resetAfter, Duration retryAfter) {
        this(allowed, limit, remaining, resetAfter, retryAfter, Duration.ZERO);
    }

    /**
     * A decision bound by a rate tier.
     *
     * @param allowed    whether the call was admitted (and counted)
     * @param limit      the binding tier's limit
     * @param remaining  what the binding tier still admits
     * @param resetAfter how long until the binding tier is back to its full limit
     * @param retryAfter for a rejected call, the shortest wait after which it could pass
     * @param window     the binding tier's window; zero when not known
     */
    public Decision(boolean allowed, long limit, long remaining, Duration resetAfter, Duration retryAfter,
                    Duration window) {
        this(allowed, limit, remaining, resetAfter, retryAfter, window, false);
    }
}
