package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * The start-up check on the supported line; the compatibility-test module runs it on Spring Boot
 * 3.5, where it refuses to start.
 */
class SpringBootVersionCheckTest {

    @Test
    void everySpringApplicationRunsIt() {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(ApplicationContextInitializer.class))
                .hasAtLeastOneElementOfType(SpringBootVersionCheck.class);
    }

    @Test
    void letsSpringBoot4Start() {
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            assertThatNoException().isThrownBy(() -> new SpringBootVersionCheck().initialize(context));
        }
    }

    @Test
    void saysInOneSentenceWhatIsNeededWhatRunsAndWhatToDo() {
        UnsupportedSpringBootException failure = new UnsupportedSpringBootException("0.1.0", "3.5.16", "6.2.19");

        assertThat(failure).hasMessage("Sluice 0.1.0 needs Spring Boot 4.x (Spring Framework 7); this application runs"
                + " Spring Boot 3.5.16 (Spring Framework 6.2.19): upgrade Spring Boot to 4.x, or remove"
                + " dev.sluice:sluice-spring-boot-starter.");
        FailureAnalysis analysis = new UnsupportedSpringBootFailureAnalyzer().analyze(new IllegalStateException(failure));
        assertThat(analysis.getDescription()).isEqualTo(
                "Sluice 0.1.0 needs Spring Boot 4.x (Spring Framework 7); this application runs Spring Boot 3.5.16"
                        + " (Spring Framework 6.2.19).");
        assertThat(analysis.getAction()).isEqualTo("Upgrade Spring Boot to 4.x, or remove dev.sluice:sluice-spring-boot-starter.");
        assertThat(analysis.getCause()).isSameAs(failure);
    }

    @Test
    void saysSoWhenAVersionIsUnknown() {
        assertThat(new UnsupportedSpringBootException(null, null, "6.2.19")).hasMessageStartingWith(
                "Sluice needs Spring Boot 4.x (Spring Framework 7); this application runs Spring Boot of an unknown"
                        + " version (Spring Framework 6.2.19)");
    }
}
