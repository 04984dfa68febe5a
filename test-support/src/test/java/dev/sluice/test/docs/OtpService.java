package dev.sluice.test.docs;

import dev.sluice.annotation.RateLimited;
import org.springframework.stereotype.Service;

/** Sends one-time codes, at most 3 a minute to a number, which is then blocked for 15 minutes. */
@Service
public class OtpService {

    /**
     * Sends a code.
     *
     * @param phone where to
     */
    @RateLimited(key = "#phone", limit = 3, window = "1m", blockFor = "15m")
    public void sendOtp(String phone) {
    }
}
