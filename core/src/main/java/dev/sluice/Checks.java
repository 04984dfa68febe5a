package dev.sluice;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** The checks shared by limiters, definitions and stores, so that their messages read alike. */
final class Checks {

    /** The rate algorithms: every algorithm but {@link Algorithm#CONCURRENCY}, which stores offer by choice. */
    static final Set<Algorithm> RATE_ALGORITHMS =
            Collections.unmodifiableSet(EnumSet.complementOf(EnumSet.of(Algorithm.CONCURRENCY)));

    /**
     * The longest {@code maxWait}: 2<sup>52</sup> ms (about 142,000 years), the bound windows and
     * blocks have too; any clock reading plus it is still an {@link java.time.Instant}.
     */
    static final Duration MAX_WAIT = Duration.ofMillis(1L << 52);

    private Checks() {
    }

    static void tiers(List<Tier> tiers) {
        Objects.requireNonNull(tiers, "tiers");
        if (tiers.isEmpty()) {
            throw new IllegalArgumentException("at least one tier is required");
        }
        for (int i = 0; i < tiers.size(); i++) {
            Tier tier = Objects.requireNonNull(tiers.get(i), "tier");
            for (int j = 0; j < i; j++) {
                if (tiers.get(j).sharesStateWith(tier)) {
                    if (tier.isConcurrency()) {
                        throw new IllegalArgumentException("two concurrency tiers: " + tiers.get(j) + " and " + tier
                                + "; a key holds one count of running calls, so give one");
                    }
                    throw new IllegalArgumentException("two tiers share algorithm and window: " + tiers.get(j)
                            + " and " + tier + "; give each tier its own window or algorithm");
                }
            }
        }
    }

    static void cost(List<Tier> tiers, long cost) {
        long smallestLimit = Long.MAX_VALUE;
        for (Tier tier : tiers) {
            smallestLimit = Math.min(smallestLimit, tier.limit());
        }
        if (cost < 1 || cost > smallestLimit) {
            throw new IllegalArgumentException("cost must be from 1 to the smallest limit (" + smallestLimit
                    + "), was " + cost + (cost > smallestLimit ? ": such a call could never be admitted" : ""));
        }
    }

    static void maxWait(OnLimit onLimit, Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait);
        }
        if (maxWait.compareTo(MAX_WAIT) > 0) {
            throw new IllegalArgumentException("maxWait must be at most 2^52 ms (about 142,000 years), was " + maxWait);
        }
        if (onLimit != OnLimit.WAIT && !maxWait.isZero()) {
            throw new IllegalArgumentException("maxWait applies only with onLimit WAIT, was " + maxWait
                    + " with " + onLimit);
        }
    }

    static void pause(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        if (duration.compareTo(Duration.ofMillis(Tier.MAX_LIMIT_TIMES_WINDOW_MILLIS)) > 0) {
            throw new IllegalArgumentException("a pause must be at most 2^52 ms (about 142,000 years), was "
                    + duration);
        }
    }

    /**
     * Checks that a limiter name can be the policy name of the {@code RateLimit-Policy} and
     * {@code RateLimit} headers, which carry it as an RFC 9651 string: printable ASCII only
     * ({@code "} and {@code \} are escaped there).
     */
    static String name(String name) {
        Objects.requireNonNull(name, "name");
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c > 0x7E) {
                throw new IllegalArgumentException("name '" + escapeControls(name) + "' has "
                        + String.format("U+%04X", name.codePointAt(i)) + " at index " + i + ", which a policy name"
                        + " in RateLimit headers (an RFC 9651 string) cannot carry: use printable ASCII only"
                        + " (U+0020 to U+007E)");
            }
        }
        return name;
    }

    /** The text with control characters written as Java escapes, so that a message stays on one line. */
    private static String escapeControls(String text) {
        StringBuilder escaped = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isISOControl(c)) {
                escaped.append(String.format("\\u%04x", (int) c));
            } else {
                escaped.append(c);
            }
        }
        return escaped.toString();
    }
}
