package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.RateLimitConfigurationException;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.MapPropertySource;

/** Plain Spring: {@code @EnableRateLimiting} limits beans through proxies and validates them at start-up. */
class EnableRateLimitingTest {

    static class Greeter {
        @RateLimited(key = "#name", limit = 2, window = "${greeting.window}")
        public String greet(String name) {
            return "hello " + name;
        }

        public String greetTwice(String name) {
            return greet(name) + greet(name) + greet(name);
        }
    }

    static class Tenants {
        public String current() {
            return "acme";
        }
    }

    static class Reports {
        @RateLimited(key = "@tenants.current()", limit = 1, window = "1h")
        public String run() {
            return "report";
        }
    }

    @Configuration
    @EnableRateLimiting
    static class App {
        @Bean
        Greeter greeter() {
            return new Greeter();
        }

        @Bean
        Tenants tenants() {
            return new Tenants();
        }

        @Bean
        Reports reports() {
            return new Reports();
        }

        @Bean
        MutableClock clock() {
            return new MutableClock(Instant.parse("2500-01-01T00:00:00Z"));
        }
    }

    private static AnnotationConfigApplicationContext start(Class<?>... configuration) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources()
                .addFirst(new MapPropertySource("test", Map.of("greeting.window", "1m")));
        context.register(configuration);
        context.refresh();
        return context;
    }

    @Test
    void limitsBeansThroughProxiesWithPlaceholdersFromTheEnvironment() {
        try (AnnotationConfigApplicationContext context = start(App.class)) {
            Greeter greeter = context.getBean(Greeter.class);
            assertThat(AopUtils.isAopProxy(greeter)).isTrue();
            greeter.greet("ann");
            greeter.greet("ann");
            assertThatThrownBy(() -> greeter.greet("ann")).isInstanceOf(RateLimitExceededException.class);
            assertThat(greeter.greet("bob")).isEqualTo("hello bob");

            context.getBean(MutableClock.class).advance(Duration.ofMinutes(2));
            assertThat(greeter.greet("ann")).isEqualTo("hello ann");
        }
    }

    @Test
    void selfInvocationBypassesTheProxyAsDocumented() {
        try (AnnotationConfigApplicationContext context = start(App.class)) {
            assertThat(context.getBean(Greeter.class).greetTwice("cy")).isEqualTo("hello cyhello cyhello cy");
        }
    }

    @Test
    void resolvesBeanReferencesInKeys() {
        try (AnnotationConfigApplicationContext context = start(App.class)) {
            Reports reports = context.getBean(Reports.class);
            reports.run();
            assertThatThrownBy(reports::run).isInstanceOfSatisfying(RateLimitExceededException.class,
                    e -> assertThat(e.key()).isEqualTo("acme"));
        }
    }

    /** A store that counts the decisions it is asked for. */
    static class CountingStore implements RateLimitStore {
        final AtomicInteger decisions = new AtomicInteger();
        private final RateLimitStore delegate = InMemoryRateLimitStore.builder().build();

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            decisions.incrementAndGet();
            return delegate.tryAcquire(key, tiers, cost);
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            decisions.incrementAndGet();
            return delegate.tryAcquireAsync(key, tiers, cost);
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithStore {
        @Bean
        Greeter greeter() {
            return new Greeter();
        }

        @Bean
        CountingStore store() {
            return new CountingStore();
        }
    }

    @Test
    void decidesWithTheApplicationsStoreWhenItHasOne() {
        try (AnnotationConfigApplicationContext context = start(AppWithStore.class)) {
            context.getBean(Greeter.class).greet("dee");
            assertThat(context.getBean(CountingStore.class).decisions).hasValue(1);
        }
    }

    static class Broken {
        @RateLimited(key = "#phone", limit = 3, window = "1m")
        public void sendOtp(String number) {
        }
    }

    @Configuration
    @EnableRateLimiting
    static class BrokenApp {
        @Bean
        Broken broken() {
            return new Broken();
        }
    }

    @Test
    void aBadAnnotationFailsStartUpWithAMessageNamingTheMistake() {
        assertThatThrownBy(() -> start(BrokenApp.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessage("Invalid @RateLimited on " + Broken.class.getName() + ".sendOtp(String): key '#phone'"
                        + " refers to #phone, which is not a parameter of the method nor a known variable (known:"
                        + " #number, #p0, #a0, #root, #this)");
    }

    static class FinalMethod {
        @RateLimited(limit = 1, window = "1m")
        public final void send() {
        }
    }

    static class PrivateMethod {
        @RateLimited(limit = 1, window = "1m")
        private void send() {
        }

        public void sendNow() {
            send();
        }
    }

    static class StaticMethod {
        @RateLimited(limit = 1, window = "1m")
        public static void send() {
        }
    }

    @Configuration
    @EnableRateLimiting
    static class ProxyMode {
    }

    @Configuration
    @EnableRateLimiting(mode = AdviceMode.ASPECTJ)
    static class WeavingMode {
    }

    static Object[][] methodsProxiesCannotIntercept() {
        return new Object[][] {
            {FinalMethod.class, "final"},
            {PrivateMethod.class, "private"},
            {StaticMethod.class, "static"},
        };
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("methodsProxiesCannotIntercept")
    void aMethodProxiesCannotInterceptFailsStartUpUnlessTheAspectIsWoven(Class<?> bean, String modifier) {
        assertThatThrownBy(() -> start(ProxyMode.class, bean))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + bean.getName() + ".send()")
                .hasMessageContaining("the method is " + modifier)
                .hasMessageContaining("its calls would never be limited")
                .hasMessageContaining("@EnableRateLimiting(mode = AdviceMode.ASPECTJ)");
        start(WeavingMode.class, bean).close();
    }

    interface Gateway {
        String send(String to);
    }

    static class BananaGateway implements Gateway {
        @Override
        @RateLimited(limit = 1, window = "banana")
        public String send(String to) {
            return "sent to " + to;
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithAHandMadeProxy {
        @Bean
        Gateway gateway() {
            ProxyFactory proxy = new ProxyFactory(new BananaGateway());
            proxy.addInterface(Gateway.class);
            return (Gateway) proxy.getProxy();
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWhoseBeanSpringProxiesByInterface {
        @Bean
        BananaGateway gateway() {
            return new BananaGateway();
        }
    }

    @Test
    void validatesTheTargetClassOfBeansBehindJdkDynamicProxies() {
        for (Class<?> app : List.of(AppWithAHandMadeProxy.class, AppWhoseBeanSpringProxiesByInterface.class)) {
            assertThatThrownBy(() -> start(app))
                    .isInstanceOf(RateLimitConfigurationException.class)
                    .hasMessage("Invalid @RateLimited on " + BananaGateway.class.getName() + ".send(String): window"
                            + " 'banana' is not a duration: use a whole number with a unit (500ms, 2s, 1m, 1h, 1d)"
                            + " or ISO-8601 (PT10S)");
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithAHandMadeProxyOfAValidBean {
        @Bean
        Gateway gateway() {
            ProxyFactory proxy = new ProxyFactory(new SmsGateway());
            proxy.addInterface(Gateway.class);
            return (Gateway) proxy.getProxy();
        }
    }

    @Test
    void aBeanTheAspectDoesNotReachFailsStartUp() {
        assertThatThrownBy(() -> start(AppWithAHandMadeProxyOfAValidBean.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + SmsGateway.class.getName() + ".send(String)")
                .hasMessageContaining("bean 'gateway' does not carry the rate-limiting aspect")
                .hasMessageContaining("its calls would never be limited")
                .hasMessageContaining("@EnableRateLimiting(mode = AdviceMode.ASPECTJ)");
    }

    static class SmsGateway implements Gateway {
        @Override
        @RateLimited(key = "#to", limit = 1, window = "1m")
        public String send(String to) {
            return "sent to " + to;
        }

        @RateLimited(limit = 1, window = "1m")
        public String sendToAll() {
            return "sent to all";
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithAMethodItsJdkProxyHides {
        @Bean
        SmsGateway gateway() {
            return new SmsGateway();
        }
    }

    @Test
    void aMethodOutsideTheInterfacesOfItsJdkProxyFailsStartUp() {
        assertThatThrownBy(() -> start(AppWithAMethodItsJdkProxyHides.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + SmsGateway.class.getName() + ".sendToAll()")
                .hasMessageContaining("no interface of the JDK dynamic proxy of bean 'gateway' declares the method")
                .hasMessageContaining("its calls would never be limited")
                .hasMessageContaining("@EnableRateLimiting(mode = AdviceMode.ASPECTJ)");
    }

    static class LazyBroken {
        static final AtomicInteger created = new AtomicInteger();

        LazyBroken() {
            created.incrementAndGet();
        }

        @RateLimited(limit = 1, window = "banana")
        public void send() {
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithALazyBean {
        @Bean
        @Lazy
        LazyBroken lazyBroken() {
            return new LazyBroken();
        }
    }

    @Test
    void validatesTheClassOfALazyBeanWithoutCreatingIt() {
        assertThatThrownBy(() -> start(AppWithALazyBean.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + LazyBroken.class.getName() + ".send()");
        assertThat(LazyBroken.created).hasValue(0);
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithTwoStores {
        @Bean
        Greeter greeter() {
            return new Greeter();
        }

        @Bean
        CountingStore redis() {
            return new CountingStore();
        }

        @Bean
        CountingStore fallback() {
            return new CountingStore();
        }
    }

    @Test
    void refusesToGuessBetweenTwoStores() {
        assertThatThrownBy(() -> start(AppWithTwoStores.class))
                .hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class)
                .hasMessageContaining("expected single matching bean but found 2: redis,fallback");
    }
}
