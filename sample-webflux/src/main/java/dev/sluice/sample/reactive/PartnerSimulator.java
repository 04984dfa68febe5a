package dev.sluice.sample.reactive;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Stands in for a third-party API that allows 5 calls per second: it answers every call, and
 * counts as a violation each call that arrives when 5 others arrived within the second before
 * it.
 */
@RestController
public class PartnerSimulator {

    /** The partner's cap: calls per second. */
    static final int CALLS_PER_SECOND = 5;

    /** The arrival times of the last {@value #CALLS_PER_SECOND} calls, oldest at {@code next}. */
    private final long[] lastArrivals = new long[CALLS_PER_SECOND];
    private int next;
    private final AtomicLong calls = new AtomicLong();
    private final AtomicLong violations = new AtomicLong();

    /**
     * Quotes a price.
     *
     * @param symbol what to quote
     * @return the quote
     */
    @GetMapping("/partner/quote")
    public Map<String, Object> quote(@RequestParam String symbol) {
        long now = System.nanoTime();
        synchronized (lastArrivals) {
            // The call that arrived CALLS_PER_SECOND calls ago must be a second old or more.
            if (calls.get() >= CALLS_PER_SECOND && now - lastArrivals[next] < 1_000_000_000L) {
                violations.incrementAndGet();
            }
            lastArrivals[next] = now;
            next = (next + 1) % CALLS_PER_SECOND;
            calls.incrementAndGet();
        }
        return Map.of("symbol", symbol, "price", 100 + Math.abs(symbol.hashCode() % 900));
    }

    /**
     * Calls received so far.
     *
     * @return the count
     */
    long calls() {
        return calls.get();
    }

    /**
     * Calls that broke the cap so far.
     *
     * @return the count
     */
    long violations() {
        return violations.get();
    }
}
