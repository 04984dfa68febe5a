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
            permit().onFailure(timeout);
        }
    }

    private void succeed(int calls) {
        for (int i = 0; i < calls; i++) {
            permit().onSuccess();
        }
    }

    private StoreCircuitBreaker.Permit permit() {
        StoreCircuitBreaker.Permit permit = breaker.tryAcquirePermit();
        assertThat(permit).as("a permit").isNotNull();
        return permit;
    }

    private void refuse(int calls, long millisApart) {
        for (int i = 0; i < calls; i++) {
            assertThat(breaker.tryAcquirePermit()).isNull();
            millis.addAndGet(millisApart);
        }
    }

    @Test
    void opensWhenTheThresholdOfTheLastTwentyCallsFailed() {
        fail(2);
        succeed(17);
        fail(1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.tryAcquirePermit()).isNull();
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

        assertThat(breaker.tryAcquirePermit()).isNull();
        assertThat(breaker.retryAfter()).isEqualTo(ofMillis(600));
        assertThat(breaker.rejection()).hasMessage("Rate limit store RedisStore is not asked while it fails"
                + " (last: Redis did not answer within 100 ms)")
                .satisfies(e -> assertThat(e.retryAfter()).isEqualTo(ofMillis(600)));
    }

    @Test
    void letsOneProbeThroughAfterTheOpenDurationAndClosesWhenItAnswers() {
        fail(3);
        millis.addAndGet(1_000);

        StoreCircuitBreaker.Permit probe = permit();
        assertThat(probe.isProbe()).isTrue();
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.tryAcquirePermit()).as("others, while the probe is out").isNull();

        probe.onSuccess();
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        succeed(1);
        fail(2);
        assertThat(breaker.state()).as("the failures before it opened are forgotten").isEqualTo(State.CLOSED);
    }

    @Test
    void staysOpenForAnotherOpenDurationWhenTheProbeFails() {
        fail(3);
        millis.addAndGet(1_000);
        permit().onFailure(timeout);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        millis.addAndGet(999);
        assertThat(breaker.tryAcquirePermit()).isNull();
        millis.addAndGet(1);
        assertThat(breaker.tryAcquirePermit()).isNotNull();
    }

    @Test
    void sendsAnotherProbeWhenOneNeverReports() {
        fail(3);
        millis.addAndGet(1_000);
        StoreCircuitBreaker.Permit lost = permit();
        millis.addAndGet(999);
        assertThat(breaker.tryAcquirePermit()).isNull();
        millis.addAndGet(1);
        StoreCircuitBreaker.Permit probe = permit();
        assertThat(probe.isProbe()).isTrue();

        lost.onFailure(timeout);
        assertThat(breaker.state()).as("the lost probe reports late: it no longer decides").isEqualTo(State.HALF_OPEN);
        probe.onSuccess();
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void aHalfOpenBreakerIsDecidedByItsProbeAloneNotByCallsSentBeforeItOpened() {
        StoreCircuitBreaker.Permit sentBeforeOpening = permit();
        fail(3);
        millis.addAndGet(1_000);
        StoreCircuitBreaker.Permit probe = permit();

        sentBeforeOpening.onSuccess();
        assertThat(breaker.state()).as("an answer to a call sent before the breaker opened").isEqualTo(State.HALF_OPEN);
        sentBeforeOpening.onFailure(timeout);
        assertThat(breaker.state()).as("a failure of a call sent before the breaker opened")
                .isEqualTo(State.HALF_OPEN);
        assertThat(breaker.tryAcquirePermit()).as("others, while the probe is out").isNull();

        probe.onSuccess();
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void failuresOfCallsSentBeforeTheBreakerClosedDoNotOpenItAgain() {
        StoreCircuitBreaker.Permit[] sentBeforeOpening = {permit(), permit(), permit()};
        fail(3);
        millis.addAndGet(1_000);
        permit().onSuccess();

        for (StoreCircuitBreaker.Permit late : sentBeforeOpening) {
            late.onFailure(timeout);
        }
        assertThat(breaker.state()).as("after three late failures of calls sent before it opened")
                .isEqualTo(State.CLOSED);
        fail(2);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        fail(1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void logsOneWarningWhenItOpensAndOneLineOnceTheStoreHasAnsweredForTenSeconds() {
        List<LogRecord> lines = captureLog(() -> {
            fail(3);
            refuse(10, 50);
            millis.addAndGet(500);
            permit().onFailure(timeout);
            refuse(30, 10);
            millis.addAndGet(700);
            permit().onSuccess();
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
