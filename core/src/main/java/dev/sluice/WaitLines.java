package dev.sluice;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * The callers of one limiter that wait for a permit, in line per key. Only the first of a key's
 * line asks the store, sleeping as long as the store says between asks; the others wait for their
 * turn, then ask at once. So waiting callers are served first come, first served, and a key with
 * many waiters costs the store about one call per permit rather than one per waiter and wake-up.
 * A caller that finds no line asks the store straight away and joins only if it must wait.
 */
final class WaitLines {

    private final ConcurrentHashMap<String, Line> lines = new ConcurrentHashMap<>();

    /** Whether callers wait for a permit of this key: a newcomer then joins their line. */
    boolean waiting(String key) {
        return lines.containsKey(key);
    }

    /**
     * Joins the line of a key.
     *
     * @param rejection the decision that made the caller wait, if it asked the store already
     * @return the caller's turn, which comes once everyone before it has left
     */
    Turn join(String key, @Nullable Decision rejection) {
        Turn[] joined = new Turn[1];
        boolean[] first = new boolean[1];
        // A line changes only under its key's lock in the map.
        lines.compute(key, (k, existing) -> {
            Line line = existing == null ? new Line(key) : existing;
            joined[0] = new Turn(line);
            line.waiting.add(joined[0]);
            first[0] = line.waiting.size() == 1;
            if (rejection != null) {
                line.latestRejection = rejection;
            }
            return line;
        });
        if (first[0]) {
            joined[0].first.complete(false);
        }
        return joined[0];
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
            boolean wasFirst = line.waiting.peekFirst() == turn;
            line.waiting.remove(turn);
            next[0] = wasFirst ? line.waiting.peekFirst() : null;
            return line.waiting.isEmpty() ? null : line;
        });
        return next[0];
    }

    /** Tells a caller its turn has come, after others went first. */
    void handOver(@Nullable Turn next) {
        if (next != null) {
            next.first.complete(true);
        }
    }

    /** The callers waiting for a permit of one key, first in line first; guarded by the key's lock in the map. */
    private static final class Line {
        final String key;
        final ArrayDeque<Turn> waiting = new ArrayDeque<>(4);
        /** The latest rejection in this line, which a caller interrupted while in line reports. */
        volatile @Nullable Decision latestRejection;

        Line(String key) {
            this.key = key;
        }
    }

    /** One caller's place in a line. */
    static final class Turn {

        private final Line line;
        /** Completes once the caller is first: with whether others went before it. */
        final CompletableFuture<Boolean> first = new CompletableFuture<>();

        private Turn(Line line) {
            this.line = line;
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
