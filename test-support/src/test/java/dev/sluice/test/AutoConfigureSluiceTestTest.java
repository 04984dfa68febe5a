package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.tck.MutableClock;
import dev.sluice.test.app.OtpApp;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Tests of one application context that would see each other's counts and time without the
 * annotation: they run in a fixed order, and each uses a whole limit and moves the clock.
 */
@SpringBootTest(classes = OtpApp.class)
@AutoConfigureSluiceTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AutoConfigureSluiceTestTest {

    private static final String PHONE = "+447700900123";

    private static Instant firstTestStart;

    @Autowired
    private OtpApp.OtpService otp;

    @Autowired
    private MutableClock clock;

    private void useTheWholeLimit() {
        for (int i = 0; i < 3; i++) {
            otp.send(PHONE);
        }
        assertThatThrownBy(() -> otp.send(PHONE)).isInstanceOf(RateLimitExceededException.class);
    }

    @Test
    @Order(1)
    void aTestUsesTheWholeLimitAndMovesTheClock() {
        firstTestStart = clock.instant();
        assertThat(firstTestStart.atOffset(ZoneOffset.UTC).toLocalTime()).as("the start of a day").hasToString("00:00");
        useTheWholeLimit();
        clock.advance(Duration.ofMinutes(5));
    }

    @Test
    @Order(2)
    void theNextTestStartsWithFreshCountsAtTheSameInstant() {
        assertThat(clock.instant()).isEqualTo(firstTestStart);
        useTheWholeLimit();
    }

    @Test
    @Order(3)
    void movingTheClockPastTheBlockAdmitsAgain() {
        useTheWholeLimit();
        clock.advance(Duration.ofMinutes(15).minusMillis(1));
        assertThatThrownBy(() -> otp.send(PHONE)).as("still blocked").isInstanceOf(RateLimitExceededException.class);
        clock.advance(Duration.ofMillis(1));
        otp.send(PHONE);
    }

    @Test
    @Order(4)
    void waitsMoveTheClockInsteadOfTakingTime() {
        otp.callPartner();
        Instant admitted = clock.instant();

        otp.callPartner();

        assertThat(clock.instant()).isEqualTo(admitted.plusSeconds(1));
    }
}
