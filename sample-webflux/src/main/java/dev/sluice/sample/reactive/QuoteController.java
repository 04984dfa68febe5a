package dev.sluice.sample.reactive;

import java.time.Duration;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Fetches many quotes from the partner at once, throttled by the client rule {@link PartnerClient}
 * is called under.
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

    private final PartnerClient partner;
    private final PartnerSimulator simulator;

    QuoteController(PartnerClient partner, PartnerSimulator simulator) {
        this.partner = partner;
        this.simulator = simulator;
    }

    /**
     * Makes {@code count} calls to the partner, all at once: each waits for its permit.
     *
     * @param count how many, 1 to 100
     * @return the calls made, the violations this instance's partner counted during the batch,
     *         and the time taken
     */
    @PostMapping("/api/quotes/batch")
    public Mono<BatchResult> batch(@RequestParam(defaultValue = "20") int count) {
        if (count < 1 || count > 100) {
            return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST, "count must be from 1 to 100"));
        }
        return Mono.defer(() -> {
            long violationsBefore = simulator.violations();
            long start = System.nanoTime();
            return Flux.range(0, count).flatMap(i -> partner.quote("SYM" + i)).then(Mono.fromSupplier(() ->
                    new BatchResult(count, simulator.violations() - violationsBefore,
                            Duration.ofNanos(System.nanoTime() - start).toMillis())));
        });
    }
}
