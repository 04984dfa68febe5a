package dev.sluice.test;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.config.RateLimiterRegistryCustomizer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Records when one limiter admitted calls, as Sluice decided them, so that a test can check a
 * limit where it is kept rather than where requests arrive. A partner that counts arrivals sees
 * the permits Sluice spaced out reach it with the jitter of the network and of the machine
 * between them; on a loaded test machine that jitter alone can make a correct limiter look broken.
 *
 * <p>Declare it as a bean: it registers itself as a listener of every limiter.
 *
 * <pre class="code">
 * &#64;Bean
 * AdmissionLog partnerAdmissions() {
 *     return new AdmissionLog("partner");
 * }
 * ...
 * assertThat(admissions.mostWithin(Duration.ofSeconds(1))).isLessThanOrEqualTo(5);
 * </pre>
 *
 * <p>Times are read when the limiter hears of its decision, moments after the store made it
 * (a round trip later, with Redis): check with a span a little shorter than the window.
 */
public final class AdmissionLog implements RateLimitListener, RateLimiterRegistryCustomizer {

    private final String limiterName;
    private final List<Long> nanos = new ArrayList<>();

    /**
     * A log of the calls the limiter of this name admits.
     *
     * @param limiterName the limiter's name
     */
    public AdmissionLog(String limiterName) {
        this.limiterName = Objects.requireNonNull(limiterName, "limiterName");
    }

    @Override
    public void customize(RateLimiterRegistry.Builder builder) {
        builder.listener(this);
    }

    @Override
    public void onDecision(RateLimiter limiter, String key, Decision decision) {
        if (decision.allowed() && limiter.name().equals(limiterName)) {
            long now = System.nanoTime();
            synchronized (nanos) {
                nanos.add(now);
            }
        }
    }

    /**
     * How many calls were admitted so far.
     *
     * @return the count
     */
    public int count() {
        synchronized (nanos) {
            return nanos.size();
        }
    }

    /**
     * The most calls admitted within any span of this length.
     *
     * @param span the length of the span
     * @return the largest count of admissions less than {@code span} apart from the first
     */
    public int mostWithin(Duration span) {
        List<Long> times;
        synchronized (nanos) {
            times = new ArrayList<>(nanos);
        }
        times.sort(null);
        long length = span.toNanos();
        int most = 0;
        for (int first = 0, last = 0; last < times.size(); last++) {
            while (times.get(last) - times.get(first) >= length) {
                first++;
            }
            most = Math.max(most, last - first + 1);
        }
        return most;
    }

    /** Forgets the calls admitted so far. */
    public void clear() {
        synchronized (nanos) {
            nanos.clear();
        }
    }
}
