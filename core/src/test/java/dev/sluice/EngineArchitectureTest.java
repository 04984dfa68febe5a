package dev.sluice;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import org.junit.jupiter.api.Test;

/** The engine reads time only from the clock it is given, and knows nothing of Spring. */
class EngineArchitectureTest {

    private final JavaClasses engine = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.sluice");

    @Test
    void theEngineNeverReadsTheWallClock() {
        // But the monotonic clock the in-memory store starts with: the default of the injected clock, not a reading of time.
        noClasses().that().doNotBelongToAnyOf(MonotonicClock.class)
                .should().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(System.class, "nanoTime")
                .orShould().callMethod(Instant.class, "now")
                .orShould().callMethod(LocalDateTime.class, "now")
                .orShould().callMethod(Clock.class, "systemUTC")
                .orShould().callMethod(Clock.class, "systemDefaultZone")
                .because("time comes from the injected InstantSource, so that tests can move it")
                .check(engine);
    }

    @Test
    void theEngineDoesNotDependOnSpring() {
        noClasses().should().dependOnClassesThat().resideInAPackage("org.springframework..")
                .check(engine);
    }
}
