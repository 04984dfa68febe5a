package dev.sluice;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything the in-memory store keeps for one key: a {@link TierState} per algorithm and
 * window, whatever tiers a call brings, and the end of a block. {@link #decide} is the
 * reference implementation of the decision rules of {@link RateLimitStore}; callers hold the
 * key's lock.
 */
final class KeyState {

    private final List<TierState> states = new ArrayList<>(2);
    /** Whether the store keeps this key apart as restricted, outside its size bound; guarded by the key's lock. */
    boolean restrictedKept;
    private long blockedUntil;
    private long latest = Long.MIN_VALUE;
    private long idleMillis;

    Decision decide(long clockMillis, List<Tier> tiers, long cost) {
        // Time never runs backwards for a key, even if the clock is set back.
        long now = Math.max(clockMillis, latest);
        latest = now;
        TierState[] current = statesFor(tiers, now);
        int count = current.length;
        for (int i = 0; i < count; i++) {
            current[i].advance(now, tiers.get(i).limit());
        }

        boolean blocked = blockedUntil > now;
        boolean fits = !blocked;
        for (int i = 0; fits && i < count; i++) {
            fits = current[i].available(now, tiers.get(i).limit()) >= cost;
        }
        Decision decision;
        if (fits) {
            for (int i = 0; i < count; i++) {
                current[i].take(now, tiers.get(i).limit(), cost);
            }
            decision = admitted(now, tiers, current);
        } else {
            long block = 0;
            for (int i = 0; !blocked && i < count; i++) {
                Tier tier = tiers.get(i);
                if (current[i].available(now, tier.limit()) < cost) {
                    block = Math.max(block, tier.blockFor().toMillis());
                }
            }
            for (int i = 0; i < count; i++) {
                if (tiers.get(i).countRejected()) {
                    current[i].take(now, tiers.get(i).limit(), cost);
                }
            }
            if (block > 0) {
                blockedUntil = now + block;
            }
            decision = rejected(now, tiers, current, cost);
        }

        for (int i = 0; i < count; i++) {
            current[i].fullAt = now + current[i].resetMillis(now, tiers.get(i).limit());
        }
        // A state back to full equals a fresh one: forget it.
        states.removeIf(state -> state.fullAt <= now);
        long idleUntil = blockedUntil;
        for (TierState state : states) {
            idleUntil = Math.max(idleUntil, state.fullAt);
        }
        idleMillis = Math.max(0, idleUntil - now);
        return decision;
    }

    /** How long, after the last decision, until this state equals a fresh one. */
    long idleMillis() {
        return idleMillis;
    }

    /** The state of each tier, found by algorithm and window, or started. */
    private TierState[] statesFor(List<Tier> tiers, long now) {
        TierState[] current = new TierState[tiers.size()];
        for (int i = 0; i < current.length; i++) {
            Tier tier = tiers.get(i);
            for (TierState state : states) {
                if (state.counts(tier)) {
                    current[i] = state;
                    break;
                }
            }
            if (current[i] == null) {
                current[i] = TierState.create(tier, now);
                states.add(current[i]);
            }
        }
        return current;
    }

    private static Decision admitted(long now, List<Tier> tiers, TierState[] states) {
        int binding = tightest(now, tiers, states);
        long limit = tiers.get(binding).limit();
        return new Decision(true, limit, remaining(now, limit, states[binding]),
                Duration.ofMillis(states[binding].resetMillis(now, limit)), Duration.ZERO, tiers.get(binding).window());
    }

    private Decision rejected(long now, List<Tier> tiers, TierState[] states, long cost) {
        int binding = -1;
        long wait = 0;
        for (int i = 0; i < states.length; i++) {
            long tierWait = states[i].waitMillis(now, tiers.get(i).limit(), cost);
            if (tierWait > wait) {
                wait = tierWait;
                binding = i;
            }
        }
        if (binding < 0) {
            // Only a block rejects the call; every tier would admit it.
            binding = tightest(now, tiers, states);
        }
        long limit = tiers.get(binding).limit();
        long blockLeft = Math.max(0, blockedUntil - now);
        long remaining = blockLeft > 0 ? 0 : remaining(now, limit, states[binding]);
        long reset = Math.max(blockLeft, states[binding].resetMillis(now, limit));
        return new Decision(false, limit, remaining, Duration.ofMillis(reset),
                Duration.ofMillis(Math.max(blockLeft, wait)), tiers.get(binding).window());
    }

    /** The tier with the fewest permits left; of those, the one that takes longest to reset. */
    private static int tightest(long now, List<Tier> tiers, TierState[] states) {
        int tightest = 0;
        long fewest = Long.MAX_VALUE;
        long longestReset = -1;
        for (int i = 0; i < states.length; i++) {
            long limit = tiers.get(i).limit();
            long left = remaining(now, limit, states[i]);
            long reset = states[i].resetMillis(now, limit);
            if (left < fewest || (left == fewest && reset > longestReset)) {
                tightest = i;
                fewest = left;
                longestReset = reset;
            }
        }
        return tightest;
    }

    private static long remaining(long now, long limit, TierState state) {
        return Math.max(0, Math.min(limit, state.available(now, limit)));
    }
}
