package dev.sluice.boot.docs;

import dev.sluice.annotation.RateLimited;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** The README's quick start, compiled: its code block is the region tagged {@code quick-start}. */
@RestController
class QuickStartSnippets {

    record OtpRequest(String phone) {
    }

    record OtpResponse(String status) {
    }

    interface Codes {
        OtpResponse send(String phone);
    }

    private final Codes codes;

    QuickStartSnippets(Codes codes) {
        this.codes = codes;
    }

    // tag::quick-start[]
    @PostMapping("/api/otp")
    @ResponseStatus(HttpStatus.ACCEPTED)
    @RateLimited(key = "#ip", limit = 3, window = "1m", blockFor = "15m")
    @RateLimited(key = "#req.phone", limit = 10, window = "1h")
    public OtpResponse sendOtp(@RequestBody OtpRequest req) {
        return codes.send(req.phone());
    }
    // end::quick-start[]
}
