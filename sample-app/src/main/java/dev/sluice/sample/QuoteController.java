package dev.sluice.sample;

import dev.sluice.RateLimitExceededException;
import dev.sluice.annotation.RateLimited;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Quotes from the partner: one at a time, at most 2 fresh ones per client address in 10
 * seconds and after that the last one fetched, or many at once, throttled by the client rule
 * {@link PartnerClient} is called under.
 */
@RestController
public class QuoteController {

    /**
     * What a batch did.
     *
     * @param calls         quotes fetched from the partner
     * @param violations    calls this instance's partner counted as over its quota
     * @param elapsedMillis how long the batch took
     */
    public record BatchResult(int calls, long violations, long elapsedMillis) {
    }

    /**
     * A quote.
     *
     * @param symbol what is quoted
     * @param price  the partner's price
     * @param cached whether it is the last quote fetched for the symbol rather than a fresh one
     */
    public record Quote(String symbol, Object price, boolean cached) {
    }

    private final PartnerClient partner;
    private final PartnerSimulator simulator;
    /** The last quote fetched for each symbol. */
    private final Map<String, Quote> lastQuotes = new ConcurrentHashMap<>();

    QuoteController(PartnerClient partner, PartnerSimulator simulator) {
        this.partner = partner;
        this.simulator = simulator;
    }

    /**
     * Fetches a quote from the partner; a client asking too often gets the last quote fetched
     * for the symbol instead (see {@link #lastQuote}), with 200, not 429.
     *
     * @param symbol what to quote
     * @return the fresh quote
     */
    @GetMapping("/api/quotes/{symbol}")
    @RateLimited(name = "quote", key = "#ip", limit = 2, window = "10s", fallbackMethod = "lastQuote")
    public Quote quote(@PathVariable String symbol) {
        Quote quote = new Quote(symbol, partner.quote(symbol).get("price"), false);
        lastQuotes.put(symbol, quote);
        return quote;
    }

    /**
     * What a client asking too often gets: the last quote fetched for the symbol, marked cached.
     *
     * @param symbol  what to quote
     * @param limited why the client got no fresh quote
     * @return the last quote fetched
     * @throws RateLimitExceededException {@code limited}, answered with 429, when no quote of the
     *                                    symbol was fetched yet
     */
    Quote lastQuote(String symbol, RateLimitExceededException limited) {
        Quote last = lastQuotes.get(symbol);
        if (last == null) {
            throw limited;
        }
        return new Quote(symbol, last.price(), true);
    }

    /**
     * Makes {@code count} calls to the partner from {@code threads} threads at once, as a loaded
     * service would; each call waits for its permit.
     *
     * @param count   how many, 1 to 100
     * @param threads how many threads share them, 1 to 16
     * @return the calls made, the violations this instance's partner counted during the batch,
     *         and the time taken
     * @throws InterruptedException when the request's thread is interrupted while the batch runs
     */
    @PostMapping("/api/quotes/batch")
    public BatchResult batch(@RequestParam(defaultValue = "20") @Min(1) @Max(100) int count,
                             @RequestParam(defaultValue = "1") @Min(1) @Max(16) int threads)
            throws InterruptedException {
        long violationsBefore = simulator.violations();
        long start = System.nanoTime();
        AtomicInteger next = new AtomicInteger();
        Callable<Void> caller = () -> {
            for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
                partner.quote("SYM" + i);
            }
            return null;
        };
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        try {
            for (Future<Void> done : callers.invokeAll(Collections.nCopies(threads, caller))) {
                done.get();
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw new IllegalStateException(e.getCause());
        } finally {
            callers.shutdownNow();
        }
        return new BatchResult(count, simulator.violations() - violationsBefore,
                Duration.ofNanos(System.nanoTime() - start).toMillis());
    }
}
