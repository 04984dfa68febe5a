package dev.sluice.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * How long ago a call was admitted, as a give-back says it ({@code RateLimitStore.giveBack}), in
 * the whole milliseconds stores count in. Shared by Sluice's stores; not API (see the package).
 */
public final class Ago {

    /**
     * The longest time ago kept as it is, 2<sup>53</sup> ms: longer than any window, block or
     * refill lasts (2<sup>52</sup> ms at most), and every figure made from it stays exact in a Lua
     * number.
     */
    public static final long MAX_MILLIS = 1L << 53;

    private Ago() {
    }

    /**
     * How long ago, in whole milliseconds: rounded down, so that the time a call is taken to have
     * been admitted at is never before the millisecond it was counted in.
     *
     * @param ago how long ago a call was admitted
     * @return from 0 (for a negative {@code ago}) to {@link #MAX_MILLIS}
     */
    public static long millis(Duration ago) {
        Objects.requireNonNull(ago, "ago");
        if (ago.isNegative()) {
            return 0;
        }
        return ago.compareTo(Duration.ofMillis(MAX_MILLIS)) > 0 ? MAX_MILLIS : ago.toMillis();
    }
}
