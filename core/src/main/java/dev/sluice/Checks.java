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

    static final Set<Algorithm> ALL_ALGORITHMS = Collections.unmodifiableSet(EnumSet.allOf(Algorithm.class));

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
        if (onLimit != OnLimit.WAIT && !maxWait.isZero()) {
            throw new IllegalArgumentException("maxWait applies only with onLimit WAIT, was " + maxWait
                    + " with " + onLimit);
        }
    }
}
