package dev.sluice.boot.actuate;

import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The live changes of limits made through the actuator's {@code ratelimits} endpoint: for each
 * limiter changed, the change in force (its version, who made it and when) and the limits it had
 * before, its configured ones, to which taking the change back returns. These changes live in
 * this instance until it restarts; with the Redis store, {@link SharedLimitChanges} makes them
 * for every instance.
 *
 * <p>Public for the core auto-configuration, in its own package, which makes the changes of the
 * store it configures.
 */
public class LimitChanges {

    private final Map<String, Limits> configured = new ConcurrentHashMap<>();
    private final Map<String, Change> inForce = new ConcurrentHashMap<>();
    private final AtomicLong versions = new AtomicLong();
    /** Where the tiers of limiters that another party lowers for a while are kept meanwhile. */
    private final Map<String, Supplier<List<Tier>>> ownTiers = new ConcurrentHashMap<>();

    /**
     * Says where a limiter's own tiers are while something else may have lowered them for a
     * while, as a client rule follows the quota its partner states: a change records those as the
     * limits taking it back returns to, never the lowered ones.
     *
     * @param limiter the limiter's name
     * @param tiers   its own tiers, as they are when asked
     */
    public void ownTiers(String limiter, Supplier<List<Tier>> tiers) {
        ownTiers.put(limiter, tiers);
    }

    /**
     * Tells every other instance sharing the store that a limiter of this one paused a key
     * there, so that their callers holding permits reserved before the pause ask again and
     * wait through it ({@link RateLimiter#pausedElsewhere()}). An instance with a store of its
     * own has no one to tell.
     *
     * @param limiter the limiter's name
     */
    public void paused(String limiter) {
    }

    /**
     * Gives a limiter the limits configuration has for it now, as a refresh reads them. With a
     * change in force, the change holds, and these are what taking it back returns to.
     *
     * @param limiter the limiter
     * @param tiers   its configured tiers, or null to keep those it has
     * @param plans   its configured plans, or null to keep those it has
     * @return whether the limiter took them now: false while a change is in force
     * @throws IllegalArgumentException when the limiter cannot take them; it is then unchanged
     */
    public synchronized boolean configure(RateLimiter limiter, @Nullable List<Tier> tiers,
                                          @Nullable Map<String, List<Tier>> plans) {
        Limits baseline = configured.get(limiter.name());
        if (baseline != null) {
            configured.put(limiter.name(), new Limits(tiers != null ? tiers : baseline.tiers(),
                    plans != null ? plans : baseline.plans()));
            return false;
        }
        limiter.changeLimits(tiers != null ? tiers : limiter.tiers(), plans != null ? plans : limiter.plans());
        return true;
    }

    /**
     * Changes a limiter's limits.
     *
     * @param limiter the limiter
     * @param limits  its limits from now on
     * @param by      who made the change, or null when unknown
     * @param at      when
     * @throws IllegalArgumentException when the limiter cannot take the limits; it is then unchanged
     */
    void change(RateLimiter limiter, Limits limits, @Nullable String by, Instant at) {
        apply(limiter, new Change(versions.incrementAndGet(), by, at, limits));
    }

    /**
     * Takes back the change of a limiter: its configured limits apply again.
     *
     * @param limiter the limiter
     * @return whether a change was in force
     */
    boolean revert(RateLimiter limiter) {
        return undo(limiter);
    }

    /**
     * The change in force for a limiter.
     *
     * @param limiter the limiter's name
     * @return the change, or empty when the limiter has its configured limits
     */
    Optional<Change> inForce(String limiter) {
        return Optional.ofNullable(inForce.get(limiter));
    }

    /**
     * The limits a changed limiter had before its first change.
     *
     * @param limiter the limiter's name
     * @return its configured limits, or empty when it was not changed
     */
    Optional<Limits> configured(String limiter) {
        return Optional.ofNullable(configured.get(limiter));
    }

    /** Applies a change, remembering the limiter's own limits it replaces when none was in force. */
    final synchronized void apply(RateLimiter limiter, Change change) {
        Supplier<List<Tier>> own = ownTiers.get(limiter.name());
        Limits before = new Limits(own != null ? own.get() : limiter.tiers(), limiter.plans());
        limiter.changeLimits(change.limits().tiers(), change.limits().plans());
        configured.putIfAbsent(limiter.name(), before);
        inForce.put(limiter.name(), change);
    }

    /**
     * Brings a limiter in line with the change recorded for it as of a version: applies the
     * change when it is newer than the one in force, or, when none is recorded, takes back the
     * change in force unless it is newer than what was read.
     *
     * @param limiter  the limiter
     * @param recorded its change as read, or null when none was recorded
     * @param asOf     the version of the changes as they were read
     */
    final synchronized void follow(RateLimiter limiter, @Nullable Change recorded, long asOf) {
        Change applied = inForce.get(limiter.name());
        long appliedVersion = applied == null ? 0 : applied.version();
        if (recorded != null && recorded.version() > appliedVersion) {
            apply(limiter, recorded);
        } else if (recorded == null && applied != null && appliedVersion <= asOf) {
            undo(limiter);
        }
    }

    /**
     * Gives a limiter the change recorded for it, whatever the versions, or its configured limits
     * when none is: what a history started again holds is all there is.
     *
     * @param limiter  the limiter
     * @param recorded its change as read, or null when none was recorded
     */
    final synchronized void takeAsItIs(RateLimiter limiter, @Nullable Change recorded) {
        if (recorded != null) {
            apply(limiter, recorded);
        } else {
            undo(limiter);
        }
    }

    /** Gives a limiter its configured limits back. */
    final synchronized boolean undo(RateLimiter limiter) {
        Limits before = configured.remove(limiter.name());
        inForce.remove(limiter.name());
        if (before == null) {
            return false;
        }
        limiter.changeLimits(before.tiers(), before.plans());
        return true;
    }

    /**
     * A limiter's default tiers and plans.
     *
     * @param tiers the default tiers
     * @param plans the tiers of each plan, by name
     */
    record Limits(List<Tier> tiers, Map<String, List<Tier>> plans) {
    }

    /**
     * A change of a limiter's limits.
     *
     * @param version its version: a later change has a higher one
     * @param by      who made it, or null when unknown
     * @param at      when
     * @param limits  the limits it sets
     */
    record Change(long version, @Nullable String by, Instant at, Limits limits) {
    }
}
