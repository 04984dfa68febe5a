package dev.sluice.sample;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Fetches many quotes from the partner at once, throttled by {@link PartnerClient}. */
@RestController
public class QuoteController {

    /**
     * What a batch did.
     *
     * @param calls         calls made to the partner
     * @param violations    calls the partner counted as breaking its cap
     * @param elapsedMillis how long the batch took
     */
    public record BatchResult(int calls, long violations, long elapsedMillis) {
    }

    private final PartnerClient partner;
    private final PartnerSimulator simulator;

    QuoteController(PartnerClient partner, PartnerSimulator simulator) {
        this.partner = partner;
        this.simulator = simulator;
    }

    /**
     * Makes {@code count} calls to the partner, one after another.
     *
     * @param count how many, 1 to 100
     * @return the calls made, the partner's violation count during the batch, and the time taken
     */
    @PostMapping("/api/quotes/batch")
    public BatchResult batch(@RequestParam(defaultValue = "20") @Min(1) @Max(100) int count) {
        long violationsBefore = simulator.violations();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            partner.quote("SYM" + i);
        }
        return new BatchResult(count, simulator.violations() - violationsBefore,
                Duration.ofNanos(System.nanoTime() - start).toMillis());
    }
}
