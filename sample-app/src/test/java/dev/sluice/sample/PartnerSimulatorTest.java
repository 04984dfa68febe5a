package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The partner's own count, which the sample's users read to see what the client rule did. */
class PartnerSimulatorTest {

    @Test
    void startingTheCountsAfreshForgetsTheCallsThatFilledTheQuota() {
        PartnerSimulator partner = new PartnerSimulator();
        for (int i = 0; i < PartnerSimulator.DEFAULT_QUOTA; i++) {
            assertThat(partner.quote("ACME").getStatusCode().value()).isEqualTo(200);
        }

        partner.resetStats();

        assertThat(partner.quote("ACME").getStatusCode().value()).as("a call right after the reset").isEqualTo(200);
        assertThat(partner.stats()).isEqualTo(new PartnerSimulator.Stats(PartnerSimulator.DEFAULT_QUOTA, 1, 0, 0, 1, null));
    }
}
