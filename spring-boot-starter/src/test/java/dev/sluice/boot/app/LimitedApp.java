package dev.sluice.boot.app;

import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.RateLimited;
import dev.sluice.tck.MutableClock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** A small web application with limited endpoints, for the starter's tests over HTTP. */
@SpringBootApplication
public class LimitedApp {

    /** How many requests the products endpoint has served. */
    public static final AtomicInteger PRODUCT_CALLS = new AtomicInteger();

    /** Starts at the beginning of a minute, so that fixed windows have known ends. */
    @Bean
    MutableClock clock() {
        return new MutableClock(Instant.parse("2200-01-01T00:00:00Z"));
    }

    /** The request body of {@code POST /otp}. */
    public record OtpRequest(String phone) {
    }

    @RestController
    static class Endpoints {

        @PostMapping("/otp")
        @ResponseStatus(HttpStatus.ACCEPTED)
        @RateLimited(name = "otp-ip", key = "#ip", limit = 3, window = "1m", algorithm = Algorithm.SLIDING_LOG,
                blockFor = "15m", message = "Too many codes requested")
        @RateLimited(name = "otp-phone", key = "#body.phone", limit = 10, window = "1h",
                algorithm = Algorithm.SLIDING_LOG)
        Map<String, String> sendOtp(@RequestBody OtpRequest body) {
            return Map.of("status", "sent");
        }

        @GetMapping("/orgs/{orgId}")
        @RateLimited(name = "org-reads", key = "#orgId")
        Map<String, String> read(@PathVariable String orgId) {
            return Map.of("org", orgId);
        }

        @GetMapping("/bursts/{id}")
        @RateLimited(name = "daily", key = "#id", limit = 100, window = "1d", algorithm = Algorithm.FIXED_WINDOW)
        @RateLimited(name = "burst", key = "#id", limit = 1, window = "1s")
        Map<String, String> burst(@PathVariable String id) {
            return Map.of("burst", id);
        }

        /** Decided asynchronously: with a Redis store, on another thread than the request's. */
        @GetMapping("/async/{id}")
        @RateLimited(name = "async-reads", key = "#id", limit = 2, window = "1m")
        CompletableFuture<Map<String, String>> readLater(@PathVariable String id) {
            return CompletableFuture.completedFuture(Map.of("read", id));
        }

        /** Reactive in a servlet application: each subscription is decided, with the request's #ip. */
        @GetMapping("/mono")
        @RateLimited(name = "mono-reads", key = "#ip", limit = 2, window = "1m", algorithm = Algorithm.SLIDING_LOG)
        Mono<Map<String, String>> readReactively() {
            return Mono.just(Map.of("read", "reactively"));
        }

        /** Keyed by an optional header: requests without it cannot be counted. */
        @GetMapping("/keyed")
        @RateLimited(name = "api-key", key = "#apiKey", limit = 5, window = "1m")
        Map<String, String> keyed(@RequestHeader(name = "X-Api-Key", required = false) String apiKey) {
            return Map.of("keyed", "yes");
        }

        /** Limited by the rule {@code product-api} of application.properties alone; counts the calls it serves. */
        @GetMapping("/products/{org}/items")
        Map<String, String> products(@PathVariable String org) {
            PRODUCT_CALLS.incrementAndGet();
            return Map.of("org", org);
        }

        @GetMapping("/switched-off")
        @RateLimited(name = "switched-off", limit = 1, window = "1h")
        Map<String, String> switchedOff() {
            return Map.of("limited", "no");
        }
    }
}
