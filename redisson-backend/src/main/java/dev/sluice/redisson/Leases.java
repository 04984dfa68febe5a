package dev.sluice.redisson;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The permits this store's calls hold in concurrency tiers, by store key, each with the entry
 * its call made in the tier's log: renewed in the background, all that are due in one script
 * call per hash slot (one in all outside a cluster), a third of the way through each lease, until
 * their calls release them. Renewals go by a monotonic clock, whatever the store's clock does;
 * the renewing thread stops once no permit has been held for a while.
 *
 * <p>A release lets go of the call's own lease: of the key's leases of its cost, the one taken
 * closest to when the call was admitted. A call whose lease ran out while it ran (its renewals
 * could not reach Redis) so releases its own entry, which Redis no longer holds, never that of a
 * call admitted since.
 */
final class Leases {

    /** How often the renewer looks for leases that are due. */
    static final long TICK_MILLIS = 100;
    /** Ticks without a held lease after which the renewing thread stops. */
    private static final int IDLE_TICKS = 100;

    /**
     * A permit held: the call's entry in the log, the tier's keys, when it was taken and when it
     * is next renewed, in {@link System#nanoTime()}.
     */
    static final class Lease {
        final byte[] id;
        final long cost;
        final String state;
        final String log;
        final long leaseMillis;
        final int slot;
        final long takenAt;
        volatile long renewAt;

        Lease(byte[] id, long cost, String state, String log, long leaseMillis, int slot, long now) {
            this.id = id;
            this.cost = cost;
            this.state = state;
            this.log = log;
            this.leaseMillis = leaseMillis;
            this.slot = slot;
            this.takenAt = now;
            this.renewAt = now + TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 3;
        }
    }

    private final Map<String, Deque<Lease>> held = new ConcurrentHashMap<>();
    private final Function<List<Lease>, CompletableFuture<?>> renewer;
    private final boolean bySlot;
    private final LongSupplier nanoTime;
    /** The renewing thread's scheduler while it runs; guarded by this. */
    private @Nullable ScheduledExecutorService scheduler;
    /** Ticks in a row that found no lease; read and written by the renewing thread. */
    private int idleTicks;

    /**
     * @param renewer sends one renewal of leases that share a slot; its stage fails when they
     *                were not renewed
     * @param bySlot  whether leases of different slots go in different calls (a cluster)
     * @param nanoTime the monotonic clock renewals go by
     */
    Leases(Function<List<Lease>, CompletableFuture<?>> renewer, boolean bySlot, LongSupplier nanoTime) {
        this.renewer = renewer;
        this.bySlot = bySlot;
        this.nanoTime = nanoTime;
    }

    /** Keeps a permit a call of {@code key} now holds, until {@link #release}. */
    void held(String key, Lease lease) {
        // Within the map's lock of the key, which a release that empties the key's leases removes.
        held.compute(key, (k, leases) -> {
            Deque<Lease> kept = leases != null ? leases : new ConcurrentLinkedDeque<>();
            kept.addLast(lease);
            return kept;
        });
        renewing();
    }

    /**
     * Lets go of the lease of a call of {@code key} of this cost admitted {@code agoNanos} ago,
     * and gives its entry's id; {@code null} when the store holds no such lease.
     */
    byte @Nullable [] release(String key, long cost, long agoNanos) {
        long admitted = nanoTime.getAsLong() - agoNanos;
        byte[][] released = new byte[1][];
        held.computeIfPresent(key, (k, leases) -> {
            Lease closest = null;
            for (Lease lease : leases) {
                if (lease.cost == cost && (closest == null
                        || Math.abs(lease.takenAt - admitted) < Math.abs(closest.takenAt - admitted))) {
                    closest = lease;
                }
            }
            if (closest != null) {
                leases.remove(closest);
                released[0] = closest.id;
            }
            return leases.isEmpty() ? null : leases;
        });
        return released[0];
    }

    private synchronized void renewing() {
        if (scheduler != null) {
            return;
        }
        ScheduledExecutorService started = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "sluice-lease-renewal");
            thread.setDaemon(true);
            return thread;
        });
        idleTicks = 0;
        started.scheduleWithFixedDelay(this::renewDue, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
        scheduler = started;
    }

    /** Stops the renewing thread if still no lease is held: a lease taken meanwhile starts it again. */
    private synchronized void stopIfIdle() {
        if (held.isEmpty() && scheduler != null) {
            scheduler.shutdown();
            scheduler = null;
        }
    }

    /** Renews the leases that are due; those that fail are tried again at the next tick. */
    void renewDue() {
        if (held.isEmpty()) {
            if (++idleTicks >= IDLE_TICKS) {
                stopIfIdle();
            }
            return;
        }
        idleTicks = 0;
        long now = nanoTime.getAsLong();
        Map<Integer, List<Lease>> due = new LinkedHashMap<>();
        for (Collection<Lease> leases : held.values()) {
            for (Lease lease : leases) {
                if (now - lease.renewAt >= 0) {
                    due.computeIfAbsent(bySlot ? lease.slot : 0, slot -> new ArrayList<>()).add(lease);
                }
            }
        }
        for (List<Lease> leases : due.values()) {
            CompletableFuture<?> renewed;
            try {
                renewed = renewer.apply(leases);
            } catch (RuntimeException e) {
                continue;
            }
            renewed.whenComplete((done, failure) -> {
                if (failure == null) {
                    for (Lease lease : leases) {
                        lease.renewAt = now + TimeUnit.MILLISECONDS.toNanos(lease.leaseMillis) / 3;
                    }
                }
            });
        }
    }
}
