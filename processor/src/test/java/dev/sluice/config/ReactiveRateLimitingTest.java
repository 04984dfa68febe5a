package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.RateLimitConfigurationException;
import dev.sluice.tck.MutableClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.aspectj.lang.JoinPoint;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.Before;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import reactor.core.publisher.ConnectableFlux;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/** Reactive methods of Spring beans, limited through real proxies: each subscription is a call. */
class ReactiveRateLimitingTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    static class Catalog {
        private final AtomicInteger ran = new AtomicInteger();

        /** How often a method of the catalog ran; read through the proxy, which has no state of its own. */
        public AtomicInteger ran() {
            return ran;
        }

        @RateLimited(limit = 2, window = "1m")
        public Mono<String> product(String id) {
            ran.incrementAndGet();
            return Mono.just("product " + id);
        }

        @RateLimited(limit = 2, window = "1m")
        public Flux<String> products() {
            ran.incrementAndGet();
            return Flux.just("a", "b");
        }

        @RateLimited(key = "#tenant", limit = 2, window = "1m")
        public Mono<String> report(String tenant) {
            ran.incrementAndGet();
            return Mono.just("report for " + tenant);
        }

        @RateLimited(limit = 3, window = "1m")
        public Mono<String> flaky() {
            ran.incrementAndGet();
            return Mono.error(new IOException("down"));
        }
    }

    @Configuration
    @EnableRateLimiting
    static class App {
        @Bean
        Catalog catalog() {
            return new Catalog();
        }

        @Bean
        MutableClock clock() {
            return new MutableClock(Instant.parse("2500-01-01T00:00:00Z"));
        }
    }

    private static void withCatalog(Class<?> configuration, Consumer<AnnotationConfigApplicationContext> test) {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(configuration)) {
            assertThat(AopUtils.isAopProxy(context.getBean(Catalog.class))).isTrue();
            test.accept(context);
        }
    }

    @Test
    void aMonoSubscribedFiveTimesWithALimitOfTwoGivesTwoValuesAndThreeRejections() {
        withCatalog(App.class, context -> {
            Catalog catalog = context.getBean(Catalog.class);
            Mono<String> product = catalog.product("42");

            for (int i = 0; i < 2; i++) {
                StepVerifier.create(product).expectNext("product 42").expectComplete().verify(BOUND);
            }
            for (int i = 0; i < 3; i++) {
                StepVerifier.create(product).expectError(RateLimitExceededException.class).verify(BOUND);
            }
            assertThat(catalog.ran()).hasValue(2);
        });
    }

    @Test
    void aFluxLikewise() {
        withCatalog(App.class, context -> {
            Catalog catalog = context.getBean(Catalog.class);
            Flux<String> products = catalog.products();

            for (int i = 0; i < 2; i++) {
                StepVerifier.create(products).expectNext("a", "b").expectComplete().verify(BOUND);
            }
            for (int i = 0; i < 3; i++) {
                StepVerifier.create(products).expectError(RateLimitExceededException.class).verify(BOUND);
            }
            assertThat(catalog.ran()).hasValue(2);
        });
    }

    @Test
    void repeatAndRetryCountEachSubscription() {
        withCatalog(App.class, context -> {
            Catalog catalog = context.getBean(Catalog.class);

            StepVerifier.create(catalog.products().repeat(5))
                    .expectNext("a", "b", "a", "b")
                    .expectError(RateLimitExceededException.class)
                    .verify(BOUND);
            StepVerifier.create(catalog.flaky().retryWhen(Retry.max(10).filter(IOException.class::isInstance)))
                    .expectError(RateLimitExceededException.class)
                    .verify(BOUND);
            assertThat(catalog.ran()).hasValue(2 + 3);
        });
    }

    @Test
    void makingTheMonoTakesNoPermitAndRejectedSubscriptionsNeverRunTheMethod() {
        withCatalog(App.class, context -> {
            Catalog catalog = context.getBean(Catalog.class);
            for (int i = 0; i < 10; i++) {
                assertThat(catalog.product("unused")).isNotNull();
            }
            assertThat(catalog.ran()).hasValue(0);

            StepVerifier.create(catalog.product("1").repeat(9))
                    .expectNext("product 1", "product 1")
                    .expectError(RateLimitExceededException.class)
                    .verify(BOUND);
            assertThat(catalog.ran()).hasValue(2);
        });
    }

    @Test
    void aKeyExpressionReadsTheArguments() {
        withCatalog(App.class, context -> {
            Catalog catalog = context.getBean(Catalog.class);
            StepVerifier.create(catalog.report("acme").repeat(2))
                    .expectNextCount(2)
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(RateLimitExceededException.class,
                            rejection -> assertThat(rejection.key()).isEqualTo("acme")))
                    .verify(BOUND);
            StepVerifier.create(catalog.report("globex")).expectNext("report for globex").expectComplete()
                    .verify(BOUND);
        });
    }

    /** An application's own advice on the catalog, inside rate limiting (the default orders put it there). */
    @Aspect
    static class Auditing {
        final List<String> audited = new CopyOnWriteArrayList<>();

        @Before("execution(* dev.sluice.config.ReactiveRateLimitingTest.Catalog.product(..))")
        public void audit(JoinPoint joinPoint) {
            audited.add(joinPoint.getSignature().getName() + joinPoint.getArgs()[0]);
        }
    }

    @Configuration
    @EnableRateLimiting
    @EnableAspectJAutoProxy
    static class AuditedApp extends App {
        @Bean
        Auditing auditing() {
            return new Auditing();
        }
    }

    @Test
    void adviceInsideRateLimitingRunsForEachAdmittedSubscriptionWithItsJoinPoint() {
        withCatalog(AuditedApp.class, context -> {
            Catalog catalog = context.getBean(Catalog.class);
            Mono<String> product = catalog.product("7");
            assertThat(context.getBean(Auditing.class).audited).isEmpty();

            StepVerifier.create(product.repeat(4)).expectNextCount(2).expectError(RateLimitExceededException.class)
                    .verify(BOUND);

            assertThat(context.getBean(Auditing.class).audited).containsExactly("product7", "product7");
            assertThat(catalog.ran()).hasValue(2);
        });
    }

    static class Broadcasts {
        @RateLimited(limit = 1, window = "1m")
        public ConnectableFlux<String> live() {
            return Flux.just("x").publish();
        }
    }

    @Configuration
    @EnableRateLimiting
    static class BroadcastApp {
        @Bean
        Broadcasts broadcasts() {
            return new Broadcasts();
        }
    }

    @Test
    void aReactiveTypeThatCannotBeLimitedPerSubscriptionFailsStartUpNamingTheMethod() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(BroadcastApp.class).close())
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + Broadcasts.class.getName() + ".live(): @RateLimited"
                        + " is on a method returning reactor.core.publisher.ConnectableFlux, a reactive type whose calls"
                        + " are decided when subscribed");
    }
}
