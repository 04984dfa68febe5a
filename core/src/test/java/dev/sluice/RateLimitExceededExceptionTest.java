package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimitExceededExceptionTest {

    @Test
    void keepsItsDecisionThroughSerialization() throws Exception {
        Decision decision = new Decision(false, 3, 0, Duration.ofSeconds(60), Duration.ofSeconds(42));
        RateLimitExceededException sent = new RateLimitExceededException("otp", "10.0.0.1", decision, "Slow down");

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(sent);
        }
        RateLimitExceededException received;
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            received = (RateLimitExceededException) in.readObject();
        }

        assertThat(received.decision()).isEqualTo(decision);
        assertThat(received.retryAfter()).isEqualTo(Duration.ofSeconds(42));
        assertThat(received.limiterName()).isEqualTo("otp");
        assertThat(received.getMessage()).isEqualTo(sent.getMessage());
    }
}
