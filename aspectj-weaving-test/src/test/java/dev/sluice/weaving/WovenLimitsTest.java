package dev.sluice.weaving;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.RateLimitExceededException;
import dev.sluice.Sleeper;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitedAspect;
import dev.sluice.tck.ClockAdvancingSleeper;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.aspectj.lang.Aspects;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** Compile-time weaving without Spring: the limits are part of the methods themselves. */
class WovenLimitsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2600-06-01T12:00:00.250Z"));
    private final ClockAdvancingSleeper sleeper = new ClockAdvancingSleeper(clock);
    private final List<Duration> sleeps = sleeper.sleeps();

    @BeforeEach
    void configureTheWovenAspect() {
        RateLimitedAspect.aspectOf().setMethodRateLimiter(MethodRateLimiter.builder()
                .registry(RateLimiterRegistry.builder()
                        .store(InMemoryRateLimitStore.builder().clock(clock).build())
                        .clock(clock)
                        .sleeper(sleeper)
                        .build())
                .build());
    }

    @Test
    void theAspectIsTheAspectJSingleton() {
        assertThat(RateLimitedAspect.hasAspect()).isTrue();
        assertThat(Aspects.aspectOf(RateLimitedAspect.class)).isSameAs(RateLimitedAspect.aspectOf());
    }

    @Test
    void limitsAnObjectNobodyProxies() {
        Mailer mailer = new Mailer();
        mailer.send("a@example.com");
        mailer.send("a@example.com");
        assertThatThrownBy(() -> mailer.send("a@example.com")).isInstanceOfSatisfying(
                RateLimitExceededException.class, e -> assertThat(e.limiterName()).isEqualTo("Mailer.send"));
        assertThat(mailer.sent()).hasSize(2);
    }

    @Test
    void limitsCallsFromAnotherMethodOfTheSameObject() {
        Mailer mailer = new Mailer();
        assertThatThrownBy(() -> mailer.sendAll(List.of("b@example.com", "b@example.com", "b@example.com")))
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(mailer.sent()).containsExactly("b@example.com", "b@example.com");
    }

    @Test
    void waitsThroughTheConfiguredSleeper() {
        Mailer mailer = new Mailer();
        mailer.sendDigest("c@example.com");
        mailer.sendDigest("c@example.com");
        assertThat(mailer.sent()).containsExactly("digest:c@example.com", "digest:c@example.com");
        assertThat(sleeps).hasSize(1);
    }

    @Test
    void decidesEachSubscriptionOfAWovenReactiveMethod() {
        Mailer mailer = new Mailer();
        Mono<String> later = mailer.sendLater("e@example.com");
        assertThat(mailer.sent()).as("nothing runs before a subscription").isEmpty();

        assertThat(later.block()).isEqualTo("e@example.com");
        assertThat(later.block()).isEqualTo("e@example.com");
        assertThatThrownBy(later::block).isInstanceOfSatisfying(RateLimitExceededException.class,
                e -> assertThat(e.limiterName()).isEqualTo("Mailer.sendLater"));
        assertThat(mailer.sent()).containsExactly("later:e@example.com", "later:e@example.com");
    }

    @Test
    void limitsStaticMethods() {
        assertThat(Mailer.verify("d@example.com")).isTrue();
        assertThatThrownBy(() -> Mailer.verify("d@example.com")).isInstanceOf(RateLimitExceededException.class);
    }
}
