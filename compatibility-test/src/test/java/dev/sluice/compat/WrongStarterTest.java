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
 * A web application with the Sluice starter of the other Spring Boot line on its class path, as
 * a user gets it by taking the wrong artifact: start-up must fail with one sentence naming the
 * right one, not with a {@code NoSuchMethodError} or {@code NoClassDefFoundError} from an API
 * the line lacks. It runs on Spring Boot 3.5 with the Spring Boot 4 starter and on Spring Boot 4
 * with the Spring Boot 3.5 one.
 */
@ExtendWith(OutputCaptureExtension.class)
class WrongStarterTest {

    @Test
    void anApplicationWithTheOtherLinesStarterRefusesToStartNamingTheRightOne(CapturedOutput output) {
        boolean boot3 = SpringBootVersion.getVersion().startsWith("3.5.");
        String taken = boot3 ? "dev.sluice:sluice-spring-boot-starter" : "dev.sluice:sluice-spring-boot3-starter";
        String problem = "%s %s needs %s; this application runs Spring Boot %s (Spring Framework %s)".formatted(taken,
                System.getProperty("sluice.version"), boot3 ? "Spring Boot 4.x (Spring Framework 7)"
                        : "Spring Boot 3.5 (Spring Framework 6.2)",
                SpringBootVersion.getVersion(), SpringVersion.getVersion());
        String action = boot3 ? "use dev.sluice:sluice-spring-boot3-starter instead, the starter for Spring Boot 3.5"
                + " (Spring Framework 6.2)" : "use dev.sluice:sluice-spring-boot-starter instead, the starter for"
                + " Spring Boot 4.x (Spring Framework 7)";

        SpringApplication application = new SpringApplication(WebApplication.class);
        application.setDefaultProperties(Map.of("server.port", "0"));
        Throwable failure = catchThrowable(application::run);

        assertThat(failure).isInstanceOf(IllegalStateException.class).hasMessage(problem + ": " + action + ".");
        assertThat(causes(failure)).noneMatch(LinkageError.class::isInstance);
        assertThat(output).contains("APPLICATION FAILED TO START",
                "Description:" + System.lineSeparator() + System.lineSeparator() + problem + ".",
                "Action:" + System.lineSeparator() + System.lineSeparator() + "Use" + action.substring("use".length()) + ".");
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
    static class WebApplication {
    }
}
