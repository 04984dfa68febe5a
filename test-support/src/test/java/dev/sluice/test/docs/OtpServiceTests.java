package dev.sluice.test.docs;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.tck.MutableClock;
import dev.sluice.test.AutoConfigureSluiceTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

// tag::example[]
@SpringBootTest
@AutoConfigureSluiceTest
class OtpServiceTests {

    // OtpService.sendOtp: @RateLimited(key = "#phone", limit = 3, window = "1m", blockFor = "15m")
    @Autowired OtpService otp;
    @Autowired MutableClock clock;

    @Test
    void aFourthCodeWithinAMinuteIsRefused() {
        for (int i = 0; i < 3; i++) {
            otp.sendOtp("+447700900123");
        }
        assertThatThrownBy(() -> otp.sendOtp("+447700900123"))
                .isInstanceOf(RateLimitExceededException.class);
    }

    @Test
    void theNumberMayAskAgainOnceTheBlockIsOver() {   // fresh counts, whatever ran before
        for (int i = 0; i < 3; i++) {
            otp.sendOtp("+447700900123");
        }
        assertThatThrownBy(() -> otp.sendOtp("+447700900123"))
                .isInstanceOf(RateLimitExceededException.class);

        clock.advance(Duration.ofMinutes(15));
        otp.sendOtp("+447700900123");
    }
}
// end::example[]
