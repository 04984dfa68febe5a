package dev.sluice.sample;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Stands in for a third-party API that allows a quota of calls in any second (5 unless changed)
 * and talks as real APIs do: every answer states the quota and what is left of it
 * ({@code RateLimit-Policy} and {@code RateLimit}), and a call arriving when the quota's worth of
 * calls arrived within the second before it is answered 429 with {@code Retry-After: 1}, and
 * counted as a violation.
 *
 * <p>Whoever plays with the sample can make the partner refuse the next call for longer
 * ({@code POST /partner/break?retryAfter=3}), change its quota ({@code POST /partner/quota?calls=3}),
 * and see what it heard ({@code GET /partner/stats}; {@code DELETE} starts the counts afresh).
 */
@RestController
@RequestMapping("/partner")
public class PartnerSimulator {

    /** The quota, in calls per second, until someone changes it. */
    static final int DEFAULT_QUOTA = 5;

    private static final long SECOND = Duration.ofSeconds(1).toNanos();

    /** The arrival times of the calls within the last second, oldest first. */
    private final Deque<Long> lastSecond = new ArrayDeque<>();
    private int quota = DEFAULT_QUOTA;
    /** The {@code Retry-After} of the 429 the next call gets, or 0 for none. */
    private int breakNext;
    private long calls;
    private long violations;
    private long forced429s;
    private int mostInOneSecond;
    private long lastArrival;
    /** Whether a 429 the partner was told to send was sent since the counts started. */
    private boolean forced;
    /** The longest time between two calls from the last such 429 on; -1 while no call followed it. */
    private long longestQuiet = -1;

    /**
     * What the partner heard since it started, or since its counts were last started afresh.
     *
     * @param quota the quota now, in calls per second
     * @param calls the calls that arrived, answered or refused
     * @param violations the calls that arrived over the quota
     * @param forced429s the calls refused because the partner was told to
     * @param mostInOneSecond the most calls that arrived within any one second
     * @param longestQuietAfterForced429Millis the longest time the partner heard no call, from the
     *        last of the {@code forced429s} to the last call; {@code null} while no call followed it
     */
    public record Stats(int quota, long calls, long violations, long forced429s, int mostInOneSecond,
                        @Nullable Long longestQuietAfterForced429Millis) {
    }

    /**
     * Quotes a price, if the quota allows.
     *
     * @param symbol what to quote
     * @return the quote, or a 429 with the time to wait
     */
    @GetMapping("/quote")
    public synchronized ResponseEntity<Map<String, Object>> quote(@RequestParam String symbol) {
        long now = System.nanoTime();
        while (!lastSecond.isEmpty() && now - lastSecond.peekFirst() >= SECOND) {
            lastSecond.removeFirst();
        }
        boolean overQuota = lastSecond.size() >= quota;
        lastSecond.addLast(now);
        calls++;
        mostInOneSecond = Math.max(mostInOneSecond, lastSecond.size());
        if (forced) {
            longestQuiet = Math.max(longestQuiet, now - lastArrival);
        }
        lastArrival = now;
        int retryAfter = 0;
        if (breakNext > 0) {
            retryAfter = breakNext;
            breakNext = 0;
            forced429s++;
            forced = true;
            longestQuiet = -1;
        } else if (overQuota) {
            retryAfter = 1;
            violations++;
        }
        int remaining = Math.max(0, quota - lastSecond.size());
        // With a window of one second, a permit is always back within a second.
        int reset = remaining > 0 ? 0 : 1;
        ResponseEntity.BodyBuilder answer = retryAfter > 0
                ? ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).header("Retry-After", String.valueOf(retryAfter))
                : ResponseEntity.ok();
        return answer.header("RateLimit-Policy", "\"quotes\";q=" + quota + ";w=1")
                .header("RateLimit", "\"quotes\";r=" + remaining + ";t=" + reset)
                .body(retryAfter > 0 ? Map.of("error", "too many calls")
                        : Map.of("symbol", symbol, "price", 100 + Math.abs(symbol.hashCode() % 900)));
    }

    /**
     * Has the next call answered 429 with this {@code Retry-After}, whatever the quota says.
     *
     * @param retryAfter the seconds the next call is told to wait, 1 to 3600
     * @return the {@code Retry-After} the next call will get
     */
    @PostMapping("/break")
    public synchronized Map<String, Object> breakNext(@RequestParam @Min(1) @Max(3600) int retryAfter) {
        breakNext = retryAfter;
        return Map.of("retryAfter", retryAfter);
    }

    /**
     * Changes the quota from the next call on.
     *
     * @param calls the calls allowed in any second, 1 to 1000
     * @return the new quota
     */
    @PostMapping("/quota")
    public synchronized Map<String, Object> quota(@RequestParam @Min(1) @Max(1000) int calls) {
        quota = calls;
        return Map.of("quota", calls);
    }

    /**
     * What the partner heard.
     *
     * @return the counts
     */
    @GetMapping("/stats")
    public synchronized Stats stats() {
        return new Stats(quota, calls, violations, forced429s, mostInOneSecond,
                longestQuiet < 0 ? null : Duration.ofNanos(longestQuiet).toMillis());
    }

    /**
     * Starts the counts afresh, keeping the quota and any break to come: the calls heard before
     * no longer count against the quota either.
     *
     * @return the counts, all zero
     */
    @DeleteMapping("/stats")
    public synchronized Stats resetStats() {
        lastSecond.clear();
        calls = 0;
        violations = 0;
        forced429s = 0;
        mostInOneSecond = 0;
        forced = false;
        longestQuiet = -1;
        return stats();
    }

    /**
     * Calls that arrived over the quota so far.
     *
     * @return the count
     */
    synchronized long violations() {
        return violations;
    }
}
