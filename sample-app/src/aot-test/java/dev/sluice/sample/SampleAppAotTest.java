package dev.sluice.sample;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.aot.AotDetector;
import org.springframework.test.context.aot.AotTestContextInitializers;

/**
 * The sample application's contract on the application context Spring AOT generated at build time
 * ({@code process-test-aot}), the way a native image runs it, here on the JVM with
 * {@code spring.aot.enabled=true}: the hints and generated code of Sluice's beans, rules and
 * endpoint must serve every request the contract makes.
 */
class SampleAppAotTest extends SampleAppContract {

    @Override
    String storeName() {
        return "InMemoryRateLimitStore";
    }

    @Override
    String storeState() {
        return "null";
    }

    @Test
    void theContextWasBuiltByTheInitializerSpringAotGenerated() throws ClassNotFoundException {
        assertThat(AotDetector.useGeneratedArtifacts()).as("spring.aot.enabled").isTrue();

        AotTestContextInitializers initializers = new AotTestContextInitializers();
        assertThat(initializers.isSupportedTestClass(getClass())).isTrue();
        assertThat(initializers.getContextInitializerClass(getClass()))
                .isNotNull()
                .satisfies(initializer -> assertThat(initializer.getName())
                        .startsWith("dev.sluice.sample.SampleAppAotTest__TestContext")
                        .endsWith("_ApplicationContextInitializer"));
        // What process-aot generated for the application itself, for java -Dspring.aot.enabled=true -jar.
        assertThat(Class.forName("dev.sluice.sample.SampleApplication__ApplicationContextInitializer")).isNotNull();
    }
}
