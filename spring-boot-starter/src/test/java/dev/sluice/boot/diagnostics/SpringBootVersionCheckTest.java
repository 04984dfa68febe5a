package dev.sluice.boot.diagnostics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * The start-up check on the line the starter is built for; the compatibility-test module runs
 * each starter on the other line, where it refuses to start.
 */
class SpringBootVersionCheckTest {

    @Test
    void everySpringApplicationRunsIt() {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(ApplicationContextInitializer.class))
                .hasAtLeastOneElementOfType(SpringBootVersionCheck.class);
    }

    @Test
    void recognisesTheLineItIsBuiltForAndLetsItStart() {
        assertThat(SpringBootLine.of(getClass().getClassLoader())).isEqualTo(StarterLine.BUILT_FOR);
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            assertThatNoException().isThrownBy(() -> new SpringBootVersionCheck().initialize(context));
        }
    }

    @Test
    void namesTheStarterForTheLineTheApplicationRuns() {
        UnsupportedSpringBootException failure = new UnsupportedSpringBootException(SpringBootLine.SPRING_BOOT_4,
                SpringBootLine.SPRING_BOOT_3_5, "0.1.0", "3.5.7", "6.2.12");

        assertThat(failure).hasMessage("dev.sluice:sluice-spring-boot-starter 0.1.0 needs Spring Boot 4.x (Spring"
                + " Framework 7); this application runs Spring Boot 3.5.7 (Spring Framework 6.2.12): use"
                + " dev.sluice:sluice-spring-boot3-starter instead, the starter for Spring Boot 3.5 (Spring Framework 6.2).");
        FailureAnalysis analysis = new UnsupportedSpringBootFailureAnalyzer().analyze(new IllegalStateException(failure));
        assertThat(analysis.getDescription()).isEqualTo("dev.sluice:sluice-spring-boot-starter 0.1.0 needs Spring"
                + " Boot 4.x (Spring Framework 7); this application runs Spring Boot 3.5.7 (Spring Framework 6.2.12).");
        assertThat(analysis.getAction()).isEqualTo("Use dev.sluice:sluice-spring-boot3-starter instead, the starter"
                + " for Spring Boot 3.5 (Spring Framework 6.2).");
        assertThat(analysis.getCause()).isSameAs(failure);

        assertThat(new UnsupportedSpringBootException(SpringBootLine.SPRING_BOOT_3_5, SpringBootLine.SPRING_BOOT_4,
                "0.1.0", "4.1.2", "7.0.3")).hasMessageEndingWith(": use dev.sluice:sluice-spring-boot-starter"
                + " instead, the starter for Spring Boot 4.x (Spring Framework 7).");
    }

    @Test
    void namesBothStartersForAnOlderLine() {
        assertThat(new UnsupportedSpringBootException(SpringBootLine.SPRING_BOOT_3_5, null, "0.1.0", "3.4.10",
                "6.2.11")).hasMessage("dev.sluice:sluice-spring-boot3-starter 0.1.0 needs Spring Boot 3.5 (Spring"
                + " Framework 6.2); this application runs Spring Boot 3.4.10 (Spring Framework 6.2.11): upgrade"
                + " Spring Boot to one of the lines Sluice has a starter for: Spring Boot 3.5 (Spring Framework 6.2)"
                + " with dev.sluice:sluice-spring-boot3-starter, or Spring Boot 4.x (Spring Framework 7) with"
                + " dev.sluice:sluice-spring-boot-starter.");
    }

    @Test
    void saysSoWhenAVersionIsUnknown() {
        assertThat(new UnsupportedSpringBootException(SpringBootLine.SPRING_BOOT_4, SpringBootLine.SPRING_BOOT_3_5,
                null, null, "6.2.12")).hasMessageStartingWith("dev.sluice:sluice-spring-boot-starter needs Spring"
                + " Boot 4.x (Spring Framework 7); this application runs Spring Boot of an unknown version (Spring"
                + " Framework 6.2.12)");
    }
}
