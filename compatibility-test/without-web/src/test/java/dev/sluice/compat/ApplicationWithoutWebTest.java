package dev.sluice.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.sluice.RateLimitExceededException;
import dev.sluice.annotation.RateLimited;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * Applications that are not web applications (batch jobs, message consumers) limit their methods
 * with the starter as web applications do: no part of the starter needs Spring Web to start.
 */
class ApplicationWithoutWebTest {

    @SpringBootApplication
    static class Job {

        @Bean
        Sender sender() {
            return new Sender();
        }
    }

    public static class Sender {

        @RateLimited(name = "sends", key = "#recipient", limit = 3, window = "1m")
        public String send(String recipient) {
            return "sent to " + recipient;
        }
    }

    @Test
    void aJobWithTheActuatorAndPrometheusLimitsItsMethods() {
        assertThat(ClassUtils.isPresent("org.springframework.web.util.pattern.PathPattern", null))
                .as("Spring Web on the class path").isFalse();

        try (ConfigurableApplicationContext job = new SpringApplicationBuilder(Job.class)
                .web(WebApplicationType.NONE).properties("spring.config.name=job").run()) {
            Sender sender = job.getBean(Sender.class);
            for (int i = 0; i < 3; i++) {
                assertThat(sender.send("ops@example.com")).isEqualTo("sent to ops@example.com");
            }
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> sender.send("ops@example.com"))
                    .satisfies(rejected -> assertThat(rejected.limiterName()).isEqualTo("sends"));
            assertThat(job.getBean(MeterRegistry.class).get("sluice.decisions").tag("limiter", "sends")
                    .tag("outcome", "rejected").counter().count()).isEqualTo(1);
        }
    }
}
