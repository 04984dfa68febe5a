package dev.sluice.benchmarks;

import java.util.concurrent.ThreadLocalRandom;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The keys calls are made for in the JMH benchmarks: one hot key, or many, made before the
 * measurement so that building them is not measured.
 */
@State(Scope.Benchmark)
public class Keys {

    /** How many distinct keys the calls cycle through. */
    @Param({"1", "100000"})
    public int count;

    private String[] names = new String[0];

    /** Makes the keys. */
    @Setup
    public void makeKeys() {
        names = new String[count];
        for (int i = 0; i < count; i++) {
            names[i] = "user-" + i;
        }
    }

    /**
     * All the keys.
     *
     * @return the keys, not to be modified
     */
    public String[] names() {
        return names;
    }

    /**
     * Each thread's walk through the keys, from a random start, one key per call: the key of a
     * call is an array read, not a computation.
     */
    @State(Scope.Thread)
    public static class Cursor {

        private String[] names = new String[0];
        private int next;

        /**
         * Starts the walk.
         *
         * @param keys the keys to walk through
         */
        @Setup
        public void start(Keys keys) {
            names = keys.names();
            next = ThreadLocalRandom.current().nextInt(names.length);
        }

        /**
         * The key of the next call.
         *
         * @return a key
         */
        public String next() {
            String name = names[next];
            if (++next == names.length) {
                next = 0;
            }
            return name;
        }
    }
}
