package dev.sluice.test.app;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Service;

/** A small application with limited methods, as the users of the test support write them. */
@SpringBootApplication
public class OtpApp {

    /** Sends one-time codes, and calls a partner that allows one call a second. */
    @Service
    public static class OtpService {

        /**
         * Sends a code.
         *
         * @param phone where to
         */
        @RateLimited(name = "otp", key = "#phone", limit = 3, window = "1m", blockFor = "15m")
        public void send(String phone) {
        }

        /** Calls the partner, waiting for a permit. */
        @RateLimited(name = "partner", limit = 1, window = "1s", algorithm = Algorithm.SLIDING_LOG,
                onLimit = OnLimit.WAIT, maxWait = "5s")
        public void callPartner() {
        }
    }
}
