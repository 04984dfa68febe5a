package dev.sluice.sample;

import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.RateLimited;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Sends one-time codes: at most 3 a minute per client address, which is then blocked for 15
 * minutes, and 10 an hour per phone number (counted without spaces or dashes, so that
 * {@code +44 7700-900123} and {@code +447700900123} are one number).
 *
 * <p>Codes cost money and are what an abuser pumps, so while the store cannot count them these
 * limits fail closed: the endpoint answers {@code 503} for a moment rather than send without
 * limit. The application's other limits keep the default and decide in this JVM meanwhile.
 */
@RestController
public class OtpController {

    /**
     * The request: the phone number to send a code to.
     *
     * @param phone the number, such as {@code +447700900123}
     */
    public record OtpRequest(@NotBlank String phone) {
    }

    /**
     * The answer: the code is on its way.
     *
     * @param status always {@code sent}
     * @param phone  the number, all but its last two digits masked
     */
    public record OtpResponse(String status, String phone) {
    }

    /**
     * Sends a code.
     *
     * @param otp the request
     * @return the answer, with status 202
     */
    @PostMapping("/api/otp")
    @ResponseStatus(HttpStatus.ACCEPTED)
    @RateLimited(name = "otp-ip", key = "#ip", limit = 3, window = "1m", blockFor = "15m",
            message = "Too many codes requested from this address; try again later",
            onStoreFailure = FailurePolicy.FAIL_CLOSED)
    @RateLimited(name = "otp-phone", key = "#otp.phone.replaceAll('[^+0-9]', '')", limit = 10, window = "1h",
            message = "Too many codes requested for this number; try again later",
            onStoreFailure = FailurePolicy.FAIL_CLOSED)
    public OtpResponse sendOtp(@Valid @RequestBody OtpRequest otp) {
        String phone = otp.phone();
        return new OtpResponse("sent", "*".repeat(Math.max(0, phone.length() - 2))
                + phone.substring(Math.max(0, phone.length() - 2)));
    }
}
