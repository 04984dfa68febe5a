package dev.sluice.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Sluice's sample application: the three jobs rate limiting exists for.
 *
 * <ul>
 *   <li>{@link OtpController}: one-time codes, limited per client address and per phone number;</li>
 *   <li>{@link ProductController}: an API limited per organization on its plan
 *       ({@link OrganizationPlans}), the limits set in {@code application.yml};</li>
 *   <li>{@link CatalogController}: an endpoint limited by a rule of {@code application.yml}
 *       alone, three tiers on one path;</li>
 *   <li>{@link PartnerClient}: outbound calls to a partner that caps us, limited by a client rule
 *       of {@code application.yml}: they wait for permits and follow what the partner answers.</li>
 * </ul>
 */
@SpringBootApplication
public class SampleApplication {

    /**
     * Starts the application.
     *
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }
}
