package dev.sluice.sample.reactive;

import dev.sluice.annotation.RateLimited;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Sends one-time codes: at most 3 a minute per client address, which is then blocked for 15
 * minutes. The limit is decided when WebFlux subscribes to the answer, so it costs the event loop
 * no blocking call, whatever the store.
 */
@RestController
public class OtpController {

    /**
     * Sends a code.
     *
     * @param phone the number, such as {@code +447700900123}
     * @return the answer, with status 202, the number masked
     */
    @PostMapping("/api/otp")
    @ResponseStatus(HttpStatus.ACCEPTED)
    @RateLimited(name = "otp-ip", key = "#ip", limit = 3, window = "1m", blockFor = "15m",
            message = "Too many codes requested from this address; try again later")
    public Mono<Map<String, String>> sendOtp(@RequestParam String phone) {
        return Mono.fromSupplier(() -> Map.of("status", "sent",
                "phone", "*".repeat(Math.max(0, phone.length() - 2)) + phone.substring(Math.max(0, phone.length() - 2))));
    }
}
