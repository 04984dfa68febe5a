package dev.sluice.test;

import org.springframework.context.ApplicationContext;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestExecutionListener;

/**
 * Before each test method of a class annotated with {@link AutoConfigureSluiceTest}, clears the
 * rate-limit stores of its application context and sets its test clock back to where it
 * started. Registered for every Spring test (in {@code META-INF/spring.factories}), it does
 * nothing where the annotation is absent.
 */
public class SluiceTestExecutionListener implements TestExecutionListener {

    /** Creates the listener; Spring's test framework does. */
    public SluiceTestExecutionListener() {
    }

    @Override
    public void beforeTestMethod(TestContext testContext) {
        if (testContext.hasApplicationContext()) {
            ApplicationContext context = testContext.getApplicationContext();
            context.getBeanProvider(SluiceTestReset.class).ifAvailable(SluiceTestReset::reset);
        }
    }
}
