package dev.sluice.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.SpringVersion;

/**
 * A Spring Boot 3.5 web application with the starter on its class path, as a user of Spring
 * Boot 3.5 gets it by adding the dependency: start-up must fail with the starter's sentence,
 * not with a {@code NoSuchMethodError} from a Spring Framework 7 API.
 */
@ExtendWith(OutputCaptureExtension.class)
class SpringBoot3StartupTest {

    @Test
    void aSpringBoot3ApplicationRefusesToStartWithOneSentence(CapturedOutput output) {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
        assertThat(SpringVersion.getVersion()).startsWith("6.2.");
        String problem = "Sluice %s needs Spring Boot 4.x (Spring Framework 7); this application runs Spring Boot %s (Spring Framework %s)"
                .formatted(System.getProperty("sluice.version"), SpringBootVersion.getVersion(), SpringVersion.getVersion());
        String action = "upgrade Spring Boot to 4.x, or remove dev.sluice:sluice-spring-boot-starter";

        SpringApplication application = new SpringApplication(Boot3Application.class);
        application.setDefaultProperties(Map.of("server.port", "0"));
        Throwable failure = catchThrowable(application::run);

        assertThat(failure).isInstanceOf(IllegalStateException.class).hasMessage(problem + ": " + action + ".");
        assertThat(causes(failure)).noneMatch(LinkageError.class::isInstance);
        assertThat(output).contains("APPLICATION FAILED TO START",
                "Description:" + System.lineSeparator() + System.lineSeparator() + problem + ".",
                "Action:" + System.lineSeparator() + System.lineSeparator() + "Upgrade" + action.substring("upgrade".length()) + ".");
    }

    private static List<Throwable> causes(Throwable failure) {
        List<Throwable> causes = new ArrayList<>();
        for (Throwable cause = failure; cause != null && !causes.contains(cause); cause = cause.getCause()) {
            causes.add(cause);
        }
        return causes;
    }

    /** The smallest Spring Boot web application. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Boot3Application {
    }
}
