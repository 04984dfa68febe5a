package dev.sluice.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads on which Sluice continues a caller's asynchronous call when the thread that has
 * the outcome must not run it (a client's I/O thread, a timer): as many daemon threads as cores
 * (at least 2), named {@code <prefix>-<n>}, made when needed and ending after 10 s idle. Never
 * the common fork-join pool, which an application's own work shares and which has a single
 * thread on a 2-core machine.
 */
public final class DaemonThreads {

    private DaemonThreads() {
    }

    /**
     * The pool that asynchronous waits end on, {@code sluice-wait-<n>}: one for the JVM, made
     * when first needed.
     *
     * @return the pool
     */
    public static Executor waits() {
        return Waits.POOL;
    }

    /**
     * A new pool of such threads.
     *
     * @param prefix the start of the threads' names
     * @return the pool
     */
    public static Executor pool(String prefix) {
        int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
        AtomicInteger made = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 10, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), task -> {
                    Thread thread = new Thread(task, prefix + "-" + made.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private static final class Waits {
        static final Executor POOL = pool("sluice-wait");
    }
}
