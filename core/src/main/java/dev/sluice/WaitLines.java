package dev.sluice;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * The callers of one limiter that wait for a permit, in line per key, in the order they came.
 * A caller takes its place on arrival. One that finds others told to wait gets in line behind
 * them without asking the store; otherwise it asks at once (with others that came meanwhile, the
 * store deciding between them), and if told to wait, waits in its place, behind any caller that
 * came before it and is still waiting for its answer. Only the first of a key's line asks the
 * store, sleeping as long as the store says between asks; the others wait for their turn, then
 * ask at once. So waiting callers are served first come, first served, even when the store's
 * answers come back in another order than their questions went, and a key with many waiters costs
 * the store about one call per permit rather than one per waiter and wake-up.
 */
final class WaitLines {

    /** What a caller whose key has no line is woken by: nothing. */
    private static final CompletionStage<?> NEVER = new CompletableFuture<Void>().minimalCompletionStage();

    private final ConcurrentHashMap<String, Line> lines = new ConcurrentHashMap<>();

    /**
     * Takes a caller's place at the end of a key's line.
     *
     * @return the caller's turn: whether it {@linkplain Turn#asks asks} the store at once, and
     *         when its turn comes if it must wait
     */
    Turn arrive(String key) {
        Turn[] arrived = new Turn[1];
        // A line changes only under its key's lock in the map.
        lines.compute(key, (k, existing) -> {
            Line line = existing == null ? new Line(key) : existing;
            arrived[0] = new Turn(line, line.waiters == 0);
            line.turns.add(arrived[0]);
            if (arrived[0].waits) {
                line.waiters++;
            }
            return line;
        });
        return arrived[0];
    }

    /**
     * Tells the line that a caller who asked on arrival must wait: it waits in its place, and
     * its turn comes at once if no one came before it.
     *
     * @param rejection the decision that made it wait
     */
    void toldToWait(Turn turn, Decision rejection) {
        boolean[] first = new boolean[1];
        // The caller is in its line until it leaves, so its line is the key's.
        lines.computeIfPresent(turn.line.key, (k, line) -> {
            if (turn.left) {
                // Cancelled: out of line already.
                return line;
            }
            turn.waits = true;
            line.waiters++;
            line.latestRejection = rejection;
            first[0] = line.turns.peekFirst() == turn;
            return line;
        });
        if (first[0]) {
            turn.first.complete(false);
        }
    }

    /**
     * What completes when a call of the key ends and gives back the permits it held: the caller
     * first in line, waiting for such a permit, asks again at once rather than at its next try.
     */
    CompletionStage<?> released(String key) {
        Line line = lines.get(key);
        return line == null ? NEVER : line.released;
    }

    /** A call of the key ended, giving back permits it held: the caller first in line asks again. */
    void release(String key) {
        Line line = lines.get(key);
        if (line != null) {
            CompletableFuture<Void> released = line.released;
            line.released = new CompletableFuture<>();
            released.complete(null);
        }
    }

    /** Leaves the line, first in it or not; the turn of the next caller comes. */
    void leave(Turn turn) {
        handOver(remove(turn));
    }

    /**
     * Leaves the line, first in it or not, without telling the next caller yet: a caller that
     * comes now finds the line as it is without this one.
     *
     * @return the caller whose turn it is now, to {@linkplain #handOver tell}; {@code null} when
     *         the turn does not pass
     */
    @Nullable Turn remove(Turn turn) {
        Turn[] next = new Turn[1];
        lines.computeIfPresent(turn.line.key, (k, line) -> {
            boolean wasFirst = line.turns.peekFirst() == turn;
            if (turn.left || !line.turns.remove(turn)) {
                return line;
            }
            turn.left = true;
            if (turn.waits) {
                line.waiters--;
            }
            Turn after = line.turns.peekFirst();
            // A caller still waiting for the answer to its first ask learns of its turn from that answer.
            next[0] = wasFirst && after != null && after.waits ? after : null;
            return line.turns.isEmpty() ? null : line;
        });
        return next[0];
    }

    /** Tells a caller its turn has come, after others went first. */
    void handOver(@Nullable Turn next) {
        if (next != null) {
            next.first.complete(true);
        }
    }

    /** The callers of one key in line, first come first; guarded by the key's lock in the map. */
    private static final class Line {
        final String key;
        final ArrayDeque<Turn> turns = new ArrayDeque<>(4);
        /** How many of them wait for their turn; a caller that comes while any do gets in line without asking. */
        int waiters;
        /** The latest rejection in this line, which a caller interrupted while in line reports. */
        volatile @Nullable Decision latestRejection;
        /** Completes when a call of the key ends and gives back permits it held; then a new one follows. */
        volatile CompletableFuture<Void> released = new CompletableFuture<>();

        Line(String key) {
            this.key = key;
        }
    }

    /** One caller's place in a line. */
    static final class Turn {

        private final Line line;
        private final boolean asks;
        /**
         * Whether the caller waits for its turn: it was told to wait, or came after others who
         * were; guarded by the line's lock.
         */
        private boolean waits;
        /** Whether the caller left its line; guarded by the line's lock. */
        private boolean left;
        /** Completes once the caller is first and told to wait: with whether others went before it. */
        final CompletableFuture<Boolean> first = new CompletableFuture<>();

        private Turn(Line line, boolean asks) {
            this.line = line;
            this.asks = asks;
            this.waits = !asks;
        }

        /**
         * Whether the caller asks the store on arrival: no one in its line was told to wait.
         * Otherwise it asks only once its turn has come.
         */
        boolean asks() {
            return asks;
        }

        /**
         * Blocks until the caller is first in line.
         *
         * @return whether others went before it
         * @throws InterruptedException when the thread is interrupted while in line
         */
        boolean awaitFirst() throws InterruptedException {
            try {
                return first.get();
            } catch (ExecutionException e) {
                throw new IllegalStateException("A turn in line never fails", e);
            }
        }

        /** Tells the line of a rejection its first caller got. */
        void rejected(Decision rejection) {
            line.latestRejection = rejection;
        }

        /** The latest rejection in the line, if any caller in it has had one. */
        @Nullable Decision latestRejection() {
            return line.latestRejection;
        }
    }
}
