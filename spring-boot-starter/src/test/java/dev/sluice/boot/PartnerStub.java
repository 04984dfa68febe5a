package dev.sluice.boot;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * A partner API on loopback, for tests of client rules: it records when each request arrives,
 * by a clock of the test's, and answers 200, or what the test queued for its next requests.
 */
final class PartnerStub implements AutoCloseable {

    /** One answer: its status and headers. */
    record Answer(int status, Map<String, String> headers) {
    }

    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(16);
    private final InstantSource clock;
    private final List<Instant> arrivals = new ArrayList<>();
    private final ConcurrentLinkedQueue<Answer> next = new ConcurrentLinkedQueue<>();
    private volatile Map<String, String> always = Map.of();
    private volatile Consumer<Integer> onArrival = arrival -> { };

    private PartnerStub(InstantSource clock) {
        this.clock = clock;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(threads);
        server.createContext("/", exchange -> {
            int arrival;
            synchronized (arrivals) {
                arrival = arrivals.size();
            }
            // What happens before the request counts: the time it travels.
            onArrival.accept(arrival);
            synchronized (arrivals) {
                arrivals.add(clock.instant());
            }
            Answer answer = next.poll();
            int status = answer == null ? 200 : answer.status;
            always.forEach(exchange.getResponseHeaders()::add);
            if (answer != null) {
                answer.headers.forEach(exchange.getResponseHeaders()::add);
            }
            byte[] body = "{}".getBytes();
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    /** A partner recording arrivals by {@code clock}. */
    static PartnerStub start(InstantSource clock) {
        return new PartnerStub(clock);
    }

    /** The partner's base URL: {@code http://127.0.0.1:port}. */
    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** Answers the next request with {@code status} and {@code headers}. */
    void answerNext(int status, Map<String, String> headers) {
        next.add(new Answer(status, headers));
    }

    /** Adds {@code headers} to every answer from now on. */
    void answerAlwaysWith(Map<String, String> headers) {
        always = Map.copyOf(headers);
    }

    /** Runs before each request is counted, with the number of requests counted before it. */
    void beforeCounting(Consumer<Integer> action) {
        onArrival = action;
    }

    /** When each request arrived, in order. */
    List<Instant> arrivals() {
        synchronized (arrivals) {
            return List.copyOf(arrivals);
        }
    }

    /** The most requests that arrived within any {@code window}, by the partner's clock. */
    int mostWithin(Duration window) {
        return mostWithin(arrivals(), window);
    }

    /** The most of {@code instants} that fall within any span of {@code window}. */
    static int mostWithin(List<Instant> instants, Duration window) {
        List<Instant> sorted = new ArrayList<>(instants);
        sorted.sort(null);
        int most = 0;
        for (int first = 0, last = 0; last < sorted.size(); last++) {
            while (!sorted.get(first).plus(window).isAfter(sorted.get(last))) {
                first++;
            }
            most = Math.max(most, last - first + 1);
        }
        return most;
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
