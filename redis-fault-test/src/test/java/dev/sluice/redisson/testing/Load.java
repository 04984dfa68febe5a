package dev.sluice.redisson.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Threads calling something in a loop, at most once a millisecond each, recording when every
 * call started and ended and how it came out, so that a test can break Redis under real
 * concurrent load and then read what callers went through.
 *
 * <pre class="code">
 * try (Load load = Load.start(32, thread -&gt; () -&gt; limiter.tryAcquire("key-" + thread))) {
 *     Load.runFor(ofSeconds(1));
 *     long killed = Load.now();
 *     server.kill();
 *     ...
 * }
 * </pre>
 */
public final class Load implements AutoCloseable {

    /**
     * One call.
     *
     * @param thread  the calling thread's number
     * @param start   when it started, in {@link #now()} nanoseconds
     * @param end     when it returned
     * @param outcome what it returned, or {@code null} when it threw
     * @param failure what it threw, or {@code null}
     */
    public record Call(int thread, long start, long end, @Nullable Object outcome, @Nullable Throwable failure) {

        /**
         * How long the call took.
         *
         * @return the latency
         */
        public Duration latency() {
            return Duration.ofNanos(end - start);
        }
    }

    private static final long PACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final List<Thread> threads = new ArrayList<>();
    private final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
    private volatile boolean running = true;

    private Load(int threadCount, IntFunction<Supplier<?>> call) {
        for (int t = 0; t < threadCount; t++) {
            int number = t;
            Supplier<?> action = call.apply(t);
            Thread thread = new Thread(() -> loop(number, action), "load-" + t);
            thread.setDaemon(true);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
    }

    /**
     * Starts the threads.
     *
     * @param threadCount how many
     * @param call        for each thread's number, what it calls
     * @return the running load
     */
    public static Load start(int threadCount, IntFunction<Supplier<?>> call) {
        return new Load(threadCount, call);
    }

    private void loop(int thread, Supplier<?> action) {
        while (running) {
            long start = now();
            Object outcome = null;
            Throwable failure = null;
            try {
                outcome = action.get();
            } catch (CompletionException e) {
                failure = e.getCause() != null ? e.getCause() : e;
            } catch (RuntimeException e) {
                failure = e;
            }
            long end = now();
            calls.add(new Call(thread, start, end, outcome, failure));
            long rest = PACE_NANOS - (end - start);
            if (rest > 0) {
                LockSupport.parkNanos(rest);
            }
        }
    }

    /**
     * The clock calls are timed with.
     *
     * @return {@link System#nanoTime()}
     */
    public static long now() {
        return System.nanoTime();
    }

    /**
     * Lets the load run for a while: a fault test holds an outage for real time, it does not
     * wait for a rate-limit window.
     *
     * @param duration how long
     */
    public static void runFor(Duration duration) {
        LockSupport.parkNanos(duration.toNanos());
    }

    /** Stops the threads and waits for their last calls. */
    @Override
    public void close() {
        running = false;
        for (Thread thread : threads) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The calls that started within a span.
     *
     * @param from start of the span, in {@link #now()} nanoseconds
     * @param to   end of the span
     * @return the calls, in no particular order
     */
    public List<Call> startedBetween(long from, long to) {
        return calls.stream().filter(call -> call.start >= from && call.start < to).toList();
    }

    /**
     * Every call so far.
     *
     * @return the calls, in no particular order
     */
    public List<Call> calls() {
        return List.copyOf(calls);
    }

    /**
     * How long after {@code since} the first call matching {@code test} that started then
     * returned.
     *
     * @param since a moment, in {@link #now()} nanoseconds
     * @param test  the calls wanted
     * @return the time from {@code since} to that call's end
     * @throws AssertionError when there is none
     */
    public Duration firstAfter(long since, Predicate<Call> test) {
        return calls.stream().filter(call -> call.start >= since && test.test(call))
                .min(Comparator.comparingLong(Call::end))
                .map(call -> Duration.ofNanos(call.end - since))
                .orElseThrow(() -> new AssertionError("no such call after the moment given"));
    }

    /**
     * Latency figures of some calls, for a report.
     *
     * @param calls the calls
     * @return p50, p99 and the worst, with the number of calls
     */
    public static String latencies(List<Call> calls) {
        long[] nanos = calls.stream().mapToLong(call -> call.end - call.start).sorted().toArray();
        if (nanos.length == 0) {
            return "no calls";
        }
        return String.format("%d calls, p50 %.1f ms, p99 %.1f ms, max %.1f ms", nanos.length,
                nanos[nanos.length / 2] / 1e6, nanos[(int) (nanos.length * 0.99)] / 1e6, nanos[nanos.length - 1] / 1e6);
    }

    /**
     * The 99th percentile latency.
     *
     * @param calls the calls, at least one
     * @return the latency
     */
    public static Duration p99(List<Call> calls) {
        long[] nanos = calls.stream().mapToLong(call -> call.end - call.start).sorted().toArray();
        return Duration.ofNanos(nanos[(int) (nanos.length * 0.99)]);
    }

    /**
     * The worst latency.
     *
     * @param calls the calls, at least one
     * @return the latency
     */
    public static Duration max(List<Call> calls) {
        return calls.stream().map(Call::latency).max(Comparator.naturalOrder()).orElseThrow();
    }

    /**
     * How many calls threw each type of exception.
     *
     * @param calls the calls
     * @return counts by the exception's simple class name
     */
    public static Map<String, Long> failures(List<Call> calls) {
        Map<String, Long> counts = new TreeMap<>();
        calls.stream().filter(call -> call.failure != null)
                .forEach(call -> counts.merge(call.failure.getClass().getSimpleName(), 1L, Long::sum));
        return counts;
    }
}
