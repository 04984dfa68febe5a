package dev.sluice.boot.web.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.RateLimited;
import dev.sluice.boot.LoggedMessages;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.web.servlet.SluiceWebMvcAutoConfiguration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Import;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Limited methods that are not reactive in a WebFlux application: decided when called, with no
 * request known, so {@code #ip} and {@code #request} fail start-up, and the methods deciding
 * synchronously, usually on an event loop, are listed in one warning.
 */
@ExtendWith(OutputCaptureExtension.class)
class NonReactiveMethodsInWebFluxTest {

    private static final String WARNING = "These rate-limited methods of this WebFlux application are not reactive";

    private final ReactiveWebApplicationContextRunner webFlux = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceWebFluxAutoConfiguration.class));

    public static class SynchronousByIp {
        @RateLimited(name = "sync-ip", key = "#ip", limit = 3, window = "1m")
        public String send() {
            return "sent";
        }
    }

    public static class FutureByRequestCost {
        @RateLimited(name = "future-cost", key = "'all'", cost = "#request.headers.size()", limit = 3, window = "1m")
        public CompletableFuture<String> send() {
            return CompletableFuture.completedFuture("sent");
        }
    }

    @RateLimited(name = "class-plan", key = "'all'", plan = "#request.headers.getFirst('X-Plan')", limit = 3, window = "1m")
    public static class PlanOnTheClass {
        public String send() {
            return "sent";
        }
    }

    public static class Reactive {
        @RateLimited(name = "mono-ip", key = "#ip", limit = 3, window = "1m")
        public Mono<String> send() {
            return Mono.just("sent");
        }

        @RateLimited(name = "flux-request", key = "#request.path.value()", limit = 3, window = "1m")
        public Flux<String> stream() {
            return Flux.just("sent");
        }
    }

    public static class Synchronous {
        @RateLimited(name = "sync-id", key = "#id", limit = 3, window = "1m")
        public String read(String id) {
            return id;
        }

        /** A parameter named ip is the argument, not the request's address. */
        @RateLimited(name = "sync-ip-argument", key = "#ip", limit = 3, window = "1m")
        public String forward(String ip) {
            return ip;
        }

        @RateLimited(name = "future-id", key = "#id", limit = 3, window = "1m")
        public CompletableFuture<String> readLater(String id) {
            return CompletableFuture.completedFuture(id);
        }
    }

    @Test
    void aSynchronousMethodKeyedByIpFailsStartUpNamingIt() {
        webFlux.withBean(SynchronousByIp.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).isInstanceOf(SluiceConfigurationException.class)
                    .hasMessage("The key expression '#ip' of the rate limit on " + SynchronousByIp.class.getName()
                            + ".send() uses #ip, which has no value in this WebFlux application: the method returns"
                            + " String, so it is decided when it is called, and only a reactive method is decided"
                            + " with its request.");
            SluiceConfigurationException failure = (SluiceConfigurationException) context.getStartupFailure();
            assertThat(failure.action()).startsWith("Return Mono or Flux from " + SynchronousByIp.class.getName()
                    + ".send(), so that each subscription is decided with its request");
        });
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(SynchronousByIp.class)
    static class SynchronousByIpApp {
    }

    @Test
    void springBootReportsWhatIsWrongAndWhatToDo(CapturedOutput output) {
        SpringApplication application = new SpringApplication(SynchronousByIpApp.class);
        application.setWebApplicationType(WebApplicationType.REACTIVE);
        application.setDefaultProperties(Map.of("spring.config.name", "none", "server.port", "0"));
        assertThatThrownBy(() -> application.run().close()).isInstanceOf(SluiceConfigurationException.class);
        String report = output.getAll().substring(output.getAll().indexOf("APPLICATION FAILED TO START"));
        assertThat(report).contains("Description:\n\nThe key expression '#ip' of the rate limit on "
                        + SynchronousByIp.class.getName() + ".send() uses #ip")
                .contains("Action:\n\nReturn Mono or Flux from " + SynchronousByIp.class.getName() + ".send()");
    }

    @Test
    void aFutureWhoseCostReadsTheRequestFailsStartUp() {
        webFlux.withBean(FutureByRequestCost.class).run(context -> assertThat(context.getStartupFailure())
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessageContaining("The cost expression '#request.headers.size()' of the rate limit on "
                        + FutureByRequestCost.class.getName() + ".send() uses #request")
                .hasMessageContaining("the method returns CompletableFuture"));
    }

    @Test
    void aPlanReadingTheRequestOnTheClassFailsStartUp() {
        webFlux.withBean(PlanOnTheClass.class).run(context -> assertThat(context.getStartupFailure())
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessageContaining("The plan expression '#request.headers.getFirst('X-Plan')' of the rate limit on "
                        + PlanOnTheClass.class.getName() + ".send() uses #request"));
    }

    @Test
    void reactiveMethodsMayUseTheRequestAndWarnOfNothing() {
        try (LoggedMessages log = new LoggedMessages(ReactiveLimitedMethodsCheck.class)) {
            webFlux.withBean(Reactive.class).run(context -> assertThat(context).hasNotFailed());
            assertThat(log.messages()).doesNotContain(WARNING);
        }
    }

    @Test
    void synchronousMethodsWithoutTheRequestStartWithOneWarningListingThem() {
        String warnings;
        try (LoggedMessages log = new LoggedMessages(ReactiveLimitedMethodsCheck.class)) {
            webFlux.withBean(Synchronous.class).run(context -> assertThat(context).hasNotFailed());
            warnings = log.messages();
        }
        String name = Synchronous.class.getName();
        assertThat(warnings).containsOnlyOnce(WARNING)
                .contains("usually an event-loop thread: " + name + ".forward(String), " + name + ".read(String). With"
                        + " the Redis store every decision blocks that thread")
                .doesNotContain(name + ".readLater(String)");
    }

    @Test
    void aServletApplicationKnowsTheRequestOfSynchronousMethods() {
        try (LoggedMessages log = new LoggedMessages(ReactiveLimitedMethodsCheck.class)) {
            new WebApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class,
                            SluiceWebMvcAutoConfiguration.class))
                    .withBean(SynchronousByIp.class)
                    .run(context -> assertThat(context).hasNotFailed());
            assertThat(log.messages()).doesNotContain(WARNING);
        }
    }
}
