package dev.sluice.boot.docs;

import dev.sluice.RateLimitExceededException;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.RateLimited;
import dev.sluice.config.EnableRateLimiting;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;

/** The examples of docs/annotations.md and docs/http-rules.md, compiled: each code block is a tagged region. */
@SuppressWarnings("unused")
class AnnotationSnippets {

    // tag::plain-spring[]
    @Configuration
    @EnableRateLimiting
    class AppConfig {
    }

    @Service
    class OtpService {

        @RateLimited(key = "#phone", limit = 3, window = "1m", message = "Too many codes requested")
        public void sendOtp(String phone) {
            // send the code
        }
    }
    // end::plain-spring[]

    void handleTheRejection(OtpService otpService, String phone) {
        // tag::rejection[]
        try {
            otpService.sendOtp(phone);
        } catch (RateLimitExceededException e) {
            // e.limiterName(), e.retryAfter(), e.decision() (limit, remaining, resetAfter);
            // e.getMessage() never contains the key: it may be personal data.
        }
        // end::rejection[]
    }

    record Quote(String symbol, long price, boolean cached) {
        Quote markedCached() {
            return new Quote(symbol, price, true);
        }
    }

    interface Partner {
        Quote quote(String symbol);
    }

    class Quotes {

        private final Map<String, Quote> lastQuotes = new ConcurrentHashMap<>();

        private final Partner partner;

        Quotes(Partner partner) {
            this.partner = partner;
        }

        // tag::fallback[]
        @GetMapping("/api/quotes/{symbol}")
        @RateLimited(key = "#ip", limit = 2, window = "10s", fallbackMethod = "lastQuote")
        public Quote quote(@PathVariable String symbol) {
            return partner.quote(symbol);
        }

        Quote lastQuote(String symbol, RateLimitExceededException limited) {
            Quote last = lastQuotes.get(symbol);
            if (last == null) {
                throw limited;                          // nothing to fall back on: 429 after all
            }
            return last.markedCached();
        }
        // end::fallback[]

        // tag::condition[]
        @RateLimited(key = "#ip", limit = 100, window = "1m", condition = "!#request.isUserInRole('ADMIN')")
        // end::condition[]
        public Quote adminQuote(String symbol) {
            return partner.quote(symbol);
        }
    }

    record Profile(String user) {
    }

    class Profiles {

        private final Map<String, Profile> profiles = new ConcurrentHashMap<>();

        // tag::unless[]
        @RateLimited(key = "#user", limit = 20, window = "1m", unless = "#result == null")   // misses are free
        public Profile lookUp(String user) {
            return profiles.get(user);
        }
        // end::unless[]
    }

    record CodeCheck(String phone, String code) {
    }

    record CodeCheckResponse(String status) {
    }

    static class WrongCodeException extends RuntimeException {
    }

    interface CodeChecker {
        CodeCheckResponse check(CodeCheck check);
    }

    class Verification {

        private final CodeChecker checker;

        Verification(CodeChecker checker) {
            this.checker = checker;
        }

        // tag::count-on[]
        @PostMapping("/api/otp/verify")
        @RateLimited(name = "otp-verify", key = "#check.phone", limit = 5, window = "15m",
                algorithm = Algorithm.SLIDING_LOG, blockFor = "15m", countOn = WrongCodeException.class)
        public CodeCheckResponse verify(@RequestBody CodeCheck check) {
            return checker.check(check);            // throws WrongCodeException for a wrong code
        }
        // end::count-on[]
    }

    record Product(String orgId, String id) {
    }

    interface Products {
        Product find(String orgId, String id);
    }

    class OrganizationProducts {

        private final Products products;

        OrganizationProducts(Products products) {
            this.products = products;
        }

        // tag::plan[]
        @GetMapping("/api/organizations/{orgId}/products/{id}")
        @RateLimited(name = "org-reads", key = "#orgId", plan = "@organizationPlans.planOf(#orgId)")
        public Product read(@PathVariable String orgId, @PathVariable String id) {
            return products.find(orgId, id);
        }
        // end::plan[]
    }
}
