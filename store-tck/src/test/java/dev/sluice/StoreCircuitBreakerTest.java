package dev.sluice;

import static dev.sluice.RateLimiterTest.captureLog;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.StoreCircuitBreaker.State;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class StoreCircuitBreakerTest {

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final StoreCircuitBreaker breaker = StoreCircuitBreaker.builder().name("RedisStore")
            .failureThreshold(3).openDuration(ofSeconds(1)).clock(clock).build();
    private final RuntimeException timeout = new StoreUnavailableException("Redis did not answer within 100 ms",
            ofSeconds(1));

    private void fail(int calls) {
        for (int i = 0; i < calls; i++) {
            assertThat(breaker.tryAcquirePermission()).isTrue();
            breaker.onFailure(timeout);
        }
    }

    private void succeed(int calls) {
        for (int i = 0; i < calls; i++) {
            assertThat(breaker.tryAcquirePermission()).isTrue();
            breaker.onSuccess();
        }
    }

    private void refuse(int calls, long millisApart) {
        for (int i = 0; i < calls; i++) {
            assertThat(breaker.tryAcquirePermission()).isFalse();
            millis.addAndGet(millisApart);
        }
    }

    @Test
    void opensWhenTheThresholdOfTheLastTwentyCallsFailed() {
        fail(2);
        succeed(17);
        fail(1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.tryAcquirePermission()).isFalse();
    }

    @Test
    void forgetsFailuresOlderThanTheLastTwentyCalls() {
        fail(2);
        succeed(18);
        fail(1);
        assertThat(breaker.state()).as("the first failure is 21 calls back").isEqualTo(State.CLOSED);
        assertThat(breaker.retryAfter()).isZero();
    }

    @Test
    void refusesCallsWhileOpenSayingWhenTheStoreIsAskedAgain() {
        fail(3);
        millis.addAndGet(400);

        assertThat(breaker.tryAcquirePermission()).isFalse();
        assertThat(breaker.retryAfter()).isEqualTo(ofMillis(600));
        assertThat(breaker.rejection()).hasMessage("Rate limit store RedisStore is not asked while it fails"
                + " (last: Redis did not answer within 100 ms)")
                .satisfies(e -> assertThat(e.retryAfter()).isEqualTo(ofMillis(600)));
    }

    @Test
    void letsOneProbeThroughAfterTheOpenDurationAndClosesWhenItAnswers() {
        fail(3);
        millis.addAndGet(1_000);

        assertThat(breaker.tryAcquirePermission()).as("the probe").isTrue();
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.tryAcquirePermission()).as("others, while the probe is out").isFalse();

        breaker.onSuccess();
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        succeed(1);
        fail(2);
        assertThat(breaker.state()).as("the failures before it opened are forgotten").isEqualTo(State.CLOSED);
    }

    @Test
    void staysOpenForAnotherOpenDurationWhenTheProbeFails() {
        fail(3);
        millis.addAndGet(1_000);
        assertThat(breaker.tryAcquirePermission()).isTrue();
        breaker.onFailure(timeout);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        millis.addAndGet(999);
        assertThat(breaker.tryAcquirePermission()).isFalse();
        millis.addAndGet(1);
        assertThat(breaker.tryAcquirePermission()).isTrue();
    }

    @Test
    void sendsAnotherProbeWhenOneNeverReports() {
        fail(3);
        millis.addAndGet(1_000);
        assertThat(breaker.tryAcquirePermission()).isTrue();
        millis.addAndGet(999);
        assertThat(breaker.tryAcquirePermission()).isFalse();
        millis.addAndGet(1);
        assertThat(breaker.tryAcquirePermission()).isTrue();
    }

    @Test
    void logsOneWarningWhenItOpensAndOneLineOnceTheStoreHasAnsweredForTenSeconds() {
        List<LogRecord> lines = captureLog(() -> {
            fail(3);
            refuse(10, 50);
            millis.addAndGet(500);
            assertThat(breaker.tryAcquirePermission()).as("the first probe").isTrue();
            breaker.onFailure(timeout);
            refuse(30, 10);
            millis.addAndGet(700);
            assertThat(breaker.tryAcquirePermission()).as("the second probe").isTrue();
            breaker.onSuccess();
            // Closed again, it opens and closes once more: the same outage.
            millis.addAndGet(3_000);
            fail(3);
            millis.addAndGet(1_000);
            succeed(1);
            millis.addAndGet(9_999);
            succeed(1);
            millis.addAndGet(1);
            succeed(2);
        });

        assertThat(lines).extracting(LogRecord::getLevel).containsExactly(Level.WARNING, Level.INFO);
        assertThat(lines).allSatisfy(line -> assertThat(line.getThrown()).isNull());
        assertThat(lines.get(0).getMessage()).isEqualTo("Rate limit store RedisStore failed 3 of its last 20 calls,"
                + " the last with: Redis did not answer within 100 ms. Its limiters follow their failure policy"
                + " without asking it; it is asked again in 1000 ms, and every 1000 ms until it answers.");
        assertThat(lines.get(1).getMessage()).isEqualTo("Rate limit store RedisStore answers again, after 6s of"
                + " failing; 40 calls did not wait for it meanwhile.");
    }

    @Test
    void refusesSettingsThatCouldNeverWork() {
        assertThatThrownBy(() -> StoreCircuitBreaker.builder().failureThreshold(0))
                .hasMessage("failureThreshold must be from 1 to 20, was 0");
        assertThatThrownBy(() -> StoreCircuitBreaker.builder().failureThreshold(21))
                .hasMessage("failureThreshold must be from 1 to 20, was 21");
        assertThatThrownBy(() -> StoreCircuitBreaker.builder().openDuration(Duration.ZERO))
                .hasMessage("openDuration must be at least 1 ms, was PT0S");
    }
}
