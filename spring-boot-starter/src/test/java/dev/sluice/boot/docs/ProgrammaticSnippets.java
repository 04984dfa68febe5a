package dev.sluice.boot.docs;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.LocalSyncRateLimitStore;
import dev.sluice.OverloadPolicy;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitedAspect;
import dev.sluice.redisson.RedissonRateLimitStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.redisson.api.RedissonClient;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import reactor.core.publisher.Mono;

/**
 * The code examples of docs/programmatic-api.md, docs/reactive-and-kotlin.md, docs/redis.md,
 * docs/local-counting.md, docs/failures.md and docs/annotations.md (AspectJ), compiled: each code
 * block is a tagged region. They are compiled, not run.
 */
@SuppressWarnings("unused")
class ProgrammaticSnippets {

    void programmatic(String clientIp) {
        // tag::programmatic[]
        RateLimitStore store = InMemoryRateLimitStore.builder().build();

        RateLimiter otp = RateLimiter.builder()
                .name("otp")
                .store(store)
                .tier(Tier.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW).withBlockFor(Duration.ofMinutes(15)))
                .tier(Tier.of(10, Duration.ofHours(1), Algorithm.SLIDING_WINDOW))
                .message("Too many codes requested")
                .build();

        otp.acquire(clientIp);                       // throws RateLimitExceededException when limited
        Decision decision = otp.tryAcquire(clientIp); // or decide yourself, without throwing
        otp.acquireAsync(clientIp)                   // never blocks the caller
           .thenCompose(d -> callPartner());
        // end::programmatic[]
    }

    private static CompletionStage<String> callPartner() {
        return CompletableFuture.completedFuture("quote");
    }

    class Limiters {

        // tag::registry[]
        @Bean
        RateLimiter partnerLimiter(RateLimiterRegistry registry) {
            return registry.limiterBuilder()
                    .name("partner-api")
                    .tier(Tier.of(100, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET))
                    .build();                       // registered under its name
        }
        // end::registry[]
    }

    record OtpResponse(String status) {
    }

    interface Codes {
        Mono<OtpResponse> send(String phone);
    }

    class ReactiveOtp {

        private final Codes codes;

        ReactiveOtp(Codes codes) {
            this.codes = codes;
        }

        // tag::reactive[]
        @PostMapping("/api/otp")
        @RateLimited(name = "otp-ip", key = "#ip", limit = 3, window = "1m", blockFor = "15m")
        public Mono<OtpResponse> sendOtp(@RequestParam String phone) {
            return codes.send(phone);
        }
        // end::reactive[]
    }

    void redis(RedissonClient redisson) {
        // tag::redis-store[]
        RateLimitStore store = RedissonRateLimitStore.builder(redisson).build();
        // end::redis-store[]
    }

    void localSync(RedissonClient redisson) {
        // tag::local-sync[]
        RedissonRateLimitStore redis = RedissonRateLimitStore.builder(redisson).build();
        LocalSyncRateLimitStore local = LocalSyncRateLimitStore.builder(redis)
                .interval(Duration.ofSeconds(1))
                .build();                                         // close() syncs what is left
        RateLimiterRegistry registry = RateLimiterRegistry.builder()
                .store(redis)                                     // exact, for every limiter...
                .limiterStores(name -> name.equals("catalog") ? local : null)   // ...but the hot one
                .build();
        // end::local-sync[]
    }

    void overload(RedissonClient redisson) {
        // tag::overload[]
        RateLimitStore store = RedissonRateLimitStore.builder(redisson)
                .batchSize(128)                          // decisions per script call, 1 to 1,024
                .maxQueued(20_000)                       // decisions that may wait at once
                .maxQueueWait(Duration.ofSeconds(1))     // the longest one may wait to be sent
                .onOverload(OverloadPolicy.REJECT)
                .build();
        // end::overload[]
    }

    void aspectj(RateLimitStore store) {
        // tag::aspectj[]
        RateLimitedAspect.aspectOf().setMethodRateLimiter(MethodRateLimiter.builder()
                .registry(RateLimiterRegistry.builder().store(store).build())
                .build());
        // end::aspectj[]
    }
}
