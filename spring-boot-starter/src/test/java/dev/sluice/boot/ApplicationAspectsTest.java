package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.annotation.RateLimited;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.Before;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.util.ClassUtils;

/**
 * The starter leaves the application's own {@code @Aspect} beans alone: Spring Boot applies them
 * only when AspectJ's weaver is on the class path, and the starter does not bring it, while
 * {@code @RateLimited} methods are limited all the same.
 */
class ApplicationAspectsTest {

    /** An aspect of the application's, unrelated to rate limiting. */
    @Aspect
    static class Auditing {
        final AtomicInteger audited = new AtomicInteger();

        @Before("execution(* dev.sluice.boot.ApplicationAspectsTest.Ledger.*(..))")
        public void audit() {
            audited.incrementAndGet();
        }
    }

    /** A service limited to two posts an hour. */
    public static class Ledger {
        @RateLimited(limit = 2, window = "1h")
        public String post() {
            return "posted";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Auditing auditing() {
            return new Auditing();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(Beans.class)
    static class App {
    }

    /** Posts three times: the third is over the limit, and the application's aspect saw none. */
    private static void assertLimitedButNotAudited(ApplicationContext context) {
        Ledger ledger = context.getBean(Ledger.class);
        assertThat(ledger.post()).isEqualTo("posted");
        assertThat(ledger.post()).isEqualTo("posted");
        assertThatThrownBy(ledger::post).isInstanceOf(RateLimitExceededException.class);
        assertThat(context.getBean(Auditing.class).audited).as("calls the application's aspect advised").hasValue(0);
    }

    @Test
    void theStarterBringsNoWeaver() {
        assertThat(ClassUtils.isPresent("org.aspectj.weaver.Advice", getClass().getClassLoader()))
                .as("AspectJ's weaver, whose presence turns on Spring Boot's AspectJ auto-proxying")
                .isFalse();
    }

    @Test
    void springBootsAopAutoConfigurationAppliesNoAspectOfTheApplicationsButTheLimitApplies() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, SluiceAutoConfiguration.class))
                .withUserConfiguration(Beans.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertLimitedButNotAudited(context);
                });
    }

    @Test
    void anApplicationWithEveryAutoConfigurationAppliesNoAspectOfItsOwnButTheLimitApplies() {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        // The test resources' application.properties, for other tests, is left out.
        application.setDefaultProperties(Map.of("spring.config.name", "application-aspects"));
        try (ConfigurableApplicationContext context = application.run()) {
            assertLimitedButNotAudited(context);
        }
    }
}
