package dev.sluice.sample.reactive;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Sluice's reactive sample: a Spring WebFlux application whose limited methods return
 * {@code Mono}, decided when subscribed and never blocking an event loop.
 *
 * <ul>
 *   <li>{@link OtpController}: one-time codes, at most 3 a minute per client address, answered
 *       with the same 429 as the servlet sample;</li>
 *   <li>{@link PartnerClient}: outbound {@code WebClient} calls to a partner that caps us, limited
 *       by a client rule of {@code application.yml}: each waits for a permit without holding a
 *       thread, and the rule follows what the partner answers;</li>
 *   <li>{@link CatalogController}: the public catalog, limited from configuration alone by the
 *       rule {@code product-api}, however a client writes its request.</li>
 * </ul>
 */
@SpringBootApplication
public class ReactiveSampleApplication {

    /**
     * Starts the application.
     *
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        SpringApplication.run(ReactiveSampleApplication.class, args);
    }
}
