package dev.sluice.sample;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.RateLimited;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Sends one-time codes and checks them. Sending: at most 3 a minute per client address, which
 * is then blocked for 15 minutes, and 10 an hour per phone number (counted without spaces or
 * dashes, so that {@code +44 7700-900123} and {@code +447700900123} are one number). Checking:
 * at most 5 <em>wrong</em> codes per number in 15 minutes, then the number is blocked for 15
 * minutes; right codes are never counted.
 *
 * <p>Codes cost money and are what an abuser pumps, and guessing them is what an abuser tries,
 * so while the store cannot count them these limits fail closed: the endpoints answer
 * {@code 503} for a moment rather than go on without limit. The application's other limits keep
 * the default and decide in this JVM meanwhile.
 */
@RestController
public class OtpController {

    private static final Logger LOG = LoggerFactory.getLogger(OtpController.class);

    private final OneTimeCodes codes;

    OtpController(OneTimeCodes codes) {
        this.codes = codes;
    }

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
     * A code to check.
     *
     * @param phone the number the code was sent to
     * @param code  the code, as the user typed it
     */
    public record CodeCheck(@NotBlank String phone, @NotBlank String code) {
    }

    /**
     * The answer to a right code.
     *
     * @param status always {@code verified}
     */
    public record CodeCheckResponse(String status) {
    }

    /** A code that is not the one last sent to the number: answered with 401. */
    @ResponseStatus(HttpStatus.UNAUTHORIZED)
    public static class WrongCodeException extends RuntimeException {
        WrongCodeException() {
            super("Wrong code");
        }
    }

    /**
     * Sends a code: issues it and writes it to the log, which is as far as this sample goes.
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
        String masked = "*".repeat(Math.max(0, phone.length() - 2)) + phone.substring(Math.max(0, phone.length() - 2));
        // A real application texts the code and never logs it; the log is how the sample's user reads it.
        LOG.info("One-time code {} for {}", codes.issue(phone), masked);
        return new OtpResponse("sent", masked);
    }

    /**
     * Checks a code. Only wrong codes count against the number's limit, five in any 15 minutes
     * (a sliding log: a number blocked after its fifth is told to wait the block's 15 minutes,
     * whenever in a window it fell): each check holds a permit while it runs, and a right code
     * gives it back.
     *
     * @param check the number and the code
     * @return the answer to a right code
     * @throws WrongCodeException when the code is not the one last sent to the number
     */
    @PostMapping("/api/otp/verify")
    @RateLimited(name = "otp-verify", key = "#check.phone.replaceAll('[^+0-9]', '')", limit = 5, window = "15m",
            algorithm = Algorithm.SLIDING_LOG, blockFor = "15m", countOn = WrongCodeException.class,
            message = "Too many wrong codes for this number; try again later",
            onStoreFailure = FailurePolicy.FAIL_CLOSED)
    public CodeCheckResponse verify(@Valid @RequestBody CodeCheck check) {
        if (!codes.matches(check.phone(), check.code())) {
            throw new WrongCodeException();
        }
        return new CodeCheckResponse("verified");
    }
}
