package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.app.LimitedApp;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.servlet.SluiceWebMvcAutoConfiguration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

/** The problem type of 429 bodies: {@code sluice.web.problem-type}. */
class ProblemTypeTest {

    @Nested
    @SpringBootTest(classes = LimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = "sluice.web.problem-type=https://errors.example.com/too-many-codes")
    class Configured {

        @LocalServerPort
        int port;

        private EntityExchangeResult<String> sendOtp(String phone) {
            return LocalServer.client(port)
                    .post().uri("/otp").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"phone\":\"" + phone + "\"}").exchange().expectBody(String.class).returnResult();
        }

        @Test
        void isTheTypeOf429Bodies() {
            for (int i = 0; i < 3; i++) {
                assertThat(sendOtp("+1555080" + i).getStatus().value()).isEqualTo(202);
            }
            EntityExchangeResult<String> rejected = sendOtp("+15550803");

            assertThat(rejected.getStatus().value()).isEqualTo(429);
            assertThat(rejected.getResponseBody()).contains("\"type\":\"https://errors.example.com/too-many-codes\"");
        }
    }

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceWebMvcAutoConfiguration.class));

    @Test
    void isTheIanaQuotaExceededTypeUnlessSet() {
        web.run(context -> assertThat(context.getBean(SluiceProperties.class).getWeb().getProblemType())
                .isEqualTo(SluiceProperties.Web.QUOTA_EXCEEDED));
    }

    @Test
    void anInvalidUriFailsStartUpNamingTheProperty() {
        web.withPropertyValues("sluice.web.problem-type=too many codes")
                .run(context -> assertThat(context).getFailure()
                        .hasStackTraceContaining("Failed to bind properties under 'sluice.web.problem-type'"));
    }
}
