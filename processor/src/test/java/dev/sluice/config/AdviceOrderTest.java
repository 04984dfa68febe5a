package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.RateLimited;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.Before;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.autoproxy.InfrastructureAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.concurrent.ConcurrentMapCacheManager;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.env.MapPropertySource;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.RetryAnnotationBeanPostProcessor;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Where rate limiting sits among the other advice of a bean in proxy mode, what its advisor
 * applies to, and that enabling it switches on no {@code @Aspect} bean of the application's.
 */
class AdviceOrderTest {

    private static AnnotationConfigApplicationContext start(Map<String, Object> properties,
                                                            Class<?>... configuration) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
        context.register(configuration);
        context.refresh();
        return context;
    }

    private static AnnotationConfigApplicationContext start(Class<?>... configuration) {
        return start(Map.of(), configuration);
    }

    /** A store that counts the decisions it is asked for: one per call that reaches the limit. */
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

    // ---------------------------------------------------------------- transactions

    /** A transaction manager that records the transactions it begins. */
    static class RecordingTransactionManager extends AbstractPlatformTransactionManager {
        final AtomicInteger begun = new AtomicInteger();

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            begun.incrementAndGet();
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
        }
    }

    static class Orders {
        @RateLimited(limit = 1, window = "1h")
        @Transactional
        public boolean place() {
            return TransactionSynchronizationManager.isActualTransactionActive();
        }
    }

    @Configuration
    @EnableTransactionManagement
    static class Transactions {
        @Bean
        RecordingTransactionManager transactionManager() {
            return new RecordingTransactionManager();
        }

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    @Configuration
    @EnableRateLimiting
    static class RateLimiting {
    }

    /**
     * The configuration of rate limiting and of the other advice, registered in both orders: the
     * order of their advisors must not depend on which the application happens to declare first.
     */
    static Stream<Arguments> rateLimitingBesides(Class<?> other) {
        return Stream.of(
                Arguments.of("rate limiting declared first", new Class<?>[] {RateLimiting.class, other}),
                Arguments.of("rate limiting declared last", new Class<?>[] {other, RateLimiting.class}));
    }

    static Stream<Arguments> rateLimitingAndTransactions() {
        return rateLimitingBesides(Transactions.class);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rateLimitingAndTransactions")
    void aRejectedCallBeginsNoTransactionAndAnAdmittedOneBeginsOne(String description, Class<?>[] configuration) {
        try (AnnotationConfigApplicationContext context = start(configuration)) {
            Orders orders = context.getBean(Orders.class);
            RecordingTransactionManager transactions = context.getBean(RecordingTransactionManager.class);

            assertThat(orders.place()).as("runs in a transaction").isTrue();
            assertThat(transactions.begun).hasValue(1);

            assertThatThrownBy(orders::place).isInstanceOf(RateLimitExceededException.class);
            assertThat(transactions.begun).as("transactions begun once the call was rejected").hasValue(1);
        }
    }

    // ---------------------------------------------------------------- caching

    static class Quotes {
        private final AtomicInteger computed = new AtomicInteger();

        @RateLimited(limit = 1, window = "1h")
        @Cacheable("quotes")
        public String quote(String symbol) {
            return symbol + "#" + computed.incrementAndGet();
        }

        /** How many times the method ran, read through the proxy. */
        public int computed() {
            return computed.get();
        }
    }

    @Configuration
    static class QuoteBeans {
        @Bean
        CacheManager cacheManager() {
            return new ConcurrentMapCacheManager("quotes");
        }

        @Bean
        Quotes quotes() {
            return new Quotes();
        }
    }

    @Configuration
    @EnableCaching
    @Import(QuoteBeans.class)
    static class Caching {
    }

    @Configuration
    @EnableRateLimiting
    @EnableCaching(order = 0)
    @Import(QuoteBeans.class)
    static class CacheFirst {
    }

    @Configuration
    @EnableRateLimiting(order = -1)
    @EnableCaching(order = 0)
    @Import(QuoteBeans.class)
    static class CacheFirstButRateLimitingBeforeIt {
    }

    /** Calls for a quote twice: the second call is a cache hit. */
    private static void assertCacheHitCounted(AnnotationConfigApplicationContext context, boolean counted) {
        Quotes quotes = context.getBean(Quotes.class);
        assertThat(quotes.quote("ACME")).isEqualTo("ACME#1");
        if (counted) {
            assertThatThrownBy(() -> quotes.quote("ACME")).isInstanceOf(RateLimitExceededException.class);
        } else {
            assertThat(quotes.quote("ACME")).isEqualTo("ACME#1");
        }
        assertThat(quotes.computed()).as("method runs").isEqualTo(1);
    }

    static Stream<Arguments> rateLimitingAndCaching() {
        return rateLimitingBesides(Caching.class);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rateLimitingAndCaching")
    void byDefaultACacheHitTakesAPermit(String description, Class<?>[] configuration) {
        try (AnnotationConfigApplicationContext context = start(configuration)) {
            assertCacheHitCounted(context, true);
        }
    }

    static Stream<Arguments> ordersThatPlaceTheCache() {
        return Stream.of(
                Arguments.of("cache advisor ordered before rate limiting", CacheFirst.class, Map.of(), false),
                Arguments.of("@EnableRateLimiting(order) before the cache", CacheFirstButRateLimitingBeforeIt.class,
                        Map.of(), true),
                Arguments.of("sluice.aspect.order before the cache", CacheFirst.class,
                        Map.of("sluice.aspect.order", "-1"), true),
                Arguments.of("sluice.aspect.order wins over @EnableRateLimiting(order)",
                        CacheFirstButRateLimitingBeforeIt.class, Map.of("sluice.aspect.order", "1"), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ordersThatPlaceTheCache")
    void theOrderDecidesWhetherACacheHitTakesAPermit(String description, Class<?> app, Map<String, Object> properties,
                                                      boolean counted) {
        try (AnnotationConfigApplicationContext context = start(properties, app)) {
            assertCacheHitCounted(context, counted);
        }
    }

    @Test
    void anOrderThatIsNoNumberFailsStartUpNamingTheProperty() {
        assertThatThrownBy(() -> start(Map.of("sluice.aspect.order", "outermost"), RateLimiting.class, Caching.class))
                .hasStackTraceContaining("sluice.aspect.order must be a whole number")
                .hasStackTraceContaining("'outermost'");
    }

    // ---------------------------------------------------------------- retrying

    /** Fails twice, then succeeds. */
    static class Partner {
        private final AtomicInteger attempts = new AtomicInteger();

        /** How many times a method ran, read through the proxy. */
        public int attempts() {
            return attempts.get();
        }

        @RateLimited(name = "partner", limit = 3, window = "1h")
        @Retryable(maxRetries = 2, delay = 0)
        public String fetch() {
            return attempt();
        }

        @RateLimited(name = "partner", limit = 3, window = "1h")
        @Retryable(maxRetries = 2, delay = 0, excludes = RateLimitExceededException.class)
        public String fetchUnlessRejected() {
            return attempt();
        }

        private String attempt() {
            if (attempts.incrementAndGet() % 3 != 0) {
                throw new IllegalStateException("flaky");
            }
            return "ok";
        }
    }

    @Configuration
    static class PartnerBeans {
        @Bean
        Partner partner() {
            return new Partner();
        }

        @Bean
        CountingStore store() {
            return new CountingStore();
        }
    }

    @Configuration
    @EnableRateLimiting
    @EnableResilientMethods
    @Import(PartnerBeans.class)
    static class Resilient {
    }

    @Configuration
    @EnableRateLimiting(order = Ordered.HIGHEST_PRECEDENCE)
    @EnableResilientMethods
    @Import(PartnerBeans.class)
    static class ResilientWithRateLimitingOutermost {
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("resilientApps")
    void retryingIsOutsideRateLimitingWhateverTheOrderSoEachAttemptTakesAPermit(Class<?> app) {
        try (AnnotationConfigApplicationContext context = start(app)) {
            Partner partner = context.getBean(Partner.class);
            CountingStore store = context.getBean(CountingStore.class);

            assertThat(partner.fetch()).isEqualTo("ok");
            assertThat(partner.attempts()).isEqualTo(3);
            assertThat(store.decisions).as("decisions for one call tried three times").hasValue(3);

            // Over the limit: the rejection is retried like any failure, and every retry is rejected too.
            assertThatThrownBy(partner::fetch).isInstanceOf(RateLimitExceededException.class);
            assertThat(store.decisions).hasValue(6);
            assertThat(partner.attempts()).as("attempts that ran the method").isEqualTo(3);

            // Unless the method does not retry rejections.
            assertThatThrownBy(partner::fetchUnlessRejected).isInstanceOf(RateLimitExceededException.class);
            assertThat(store.decisions).hasValue(7);
        }
    }

    static Stream<Class<?>> resilientApps() {
        return Stream.of(Resilient.class, ResilientWithRateLimitingOutermost.class);
    }

    @Configuration
    @EnableRateLimiting
    @Import(PartnerBeans.class)
    static class RetryingInnermost {
        @Bean
        static RetryAnnotationBeanPostProcessor retryAnnotationBeanPostProcessor() {
            RetryAnnotationBeanPostProcessor retrying = new RetryAnnotationBeanPostProcessor();
            retrying.setBeforeExistingAdvisors(false);
            return retrying;
        }
    }

    @Test
    void retryingAddedAfterExistingAdvisorsRetriesInsideRateLimitingOnOnePermit() {
        try (AnnotationConfigApplicationContext context = start(RetryingInnermost.class)) {
            Partner partner = context.getBean(Partner.class);
            CountingStore store = context.getBean(CountingStore.class);

            assertThat(partner.fetch()).isEqualTo("ok");
            assertThat(partner.attempts()).isEqualTo(3);
            assertThat(store.decisions).as("decisions for one call tried three times").hasValue(1);
        }
    }

    // ---------------------------------------------------------------- what the advisor applies to

    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    @RateLimited(limit = 1, window = "1h")
    @interface OncePerHour {
    }

    @OncePerHour
    static class LimitedByItsClass {
        public String call() {
            return "called";
        }

        /** Not public: a limit on the class leaves it alone. */
        String internal() {
            return "internal";
        }
    }

    /** Inherits the limited method, and adds one of its own that its own class does not limit. */
    static class SubclassOfALimitedClass extends LimitedByItsClass {
        public String own() {
            return "own";
        }
    }

    static class LimitedByAComposedAnnotation {
        @OncePerHour
        public String call() {
            return "called";
        }
    }

    static class LimitedDirectly {
        @RateLimited(limit = 1, window = "1h")
        protected String call() {
            return "called";
        }
    }

    static class Unlimited {
        public String call() {
            return "called";
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithEveryKindOfTarget {
        @Bean
        LimitedByItsClass limitedByItsClass() {
            return new LimitedByItsClass();
        }

        @Bean
        SubclassOfALimitedClass subclassOfALimitedClass() {
            return new SubclassOfALimitedClass();
        }

        @Bean
        LimitedByAComposedAnnotation limitedByAComposedAnnotation() {
            return new LimitedByAComposedAnnotation();
        }

        @Bean
        LimitedDirectly limitedDirectly() {
            return new LimitedDirectly();
        }

        @Bean
        Unlimited unlimited() {
            return new Unlimited();
        }
    }

    @Test
    void theAdvisorLimitsWhatTheAspectLimitsAndProxiesNothingElse() {
        try (AnnotationConfigApplicationContext context = start(AppWithEveryKindOfTarget.class)) {
            LimitedByItsClass byClass = context.getBean("limitedByItsClass", LimitedByItsClass.class);
            byClass.call();
            assertThatThrownBy(byClass::call).isInstanceOf(RateLimitExceededException.class);
            assertThat(byClass.internal() + byClass.internal()).as("a method that is not public")
                    .isEqualTo("internalinternal");

            SubclassOfALimitedClass subclass = context.getBean(SubclassOfALimitedClass.class);
            subclass.call();
            assertThatThrownBy(subclass::call).as("the inherited method").isInstanceOf(RateLimitExceededException.class);
            assertThat(subclass.own() + subclass.own()).as("the subclass's own method").isEqualTo("ownown");

            LimitedByAComposedAnnotation composed = context.getBean(LimitedByAComposedAnnotation.class);
            composed.call();
            assertThatThrownBy(composed::call).isInstanceOf(RateLimitExceededException.class);

            LimitedDirectly direct = context.getBean(LimitedDirectly.class);
            direct.call();
            assertThatThrownBy(direct::call).as("a protected method").isInstanceOf(RateLimitExceededException.class);

            assertThat(AopUtils.isAopProxy(context.getBean(Unlimited.class))).isFalse();
        }
    }

    // ---------------------------------------------------------------- the application's aspects

    /** An aspect of the application's, unrelated to rate limiting. */
    @Aspect
    static class Auditing {
        final AtomicInteger audited = new AtomicInteger();

        @Before("execution(* dev.sluice.config.AdviceOrderTest.Ledger.*(..))")
        public void audit() {
            audited.incrementAndGet();
        }
    }

    static class Ledger {
        @RateLimited(limit = 2, window = "1h")
        public String post() {
            return "posted";
        }
    }

    @Configuration
    @EnableRateLimiting
    static class AppWithAnAspect {
        @Bean
        Auditing auditing() {
            return new Auditing();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Configuration
    @EnableAspectJAutoProxy
    static class AspectJAutoProxying {
    }

    /** Posts three times with a limit of two: each call advised once, the third rejected. */
    private static void postThrice(Ledger ledger) {
        assertThat(ledger.post()).isEqualTo("posted");
        assertThat(ledger.post()).isEqualTo("posted");
        assertThatThrownBy(ledger::post).isInstanceOf(RateLimitExceededException.class);
    }

    @Test
    void enablingRateLimitingSwitchesOnNoAspectOfTheApplications() {
        try (AnnotationConfigApplicationContext context = start(AppWithAnAspect.class)) {
            postThrice(context.getBean(Ledger.class));
            assertThat(context.getBean(Auditing.class).audited).hasValue(0);
            assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
                    .isExactlyInstanceOf(InfrastructureAdvisorAutoProxyCreator.class);
        }
    }

    @Test
    void theApplicationsAspectsApplyWhenItEnablesThemAndRateLimitingStillApplyOnce() {
        try (AnnotationConfigApplicationContext context = start(AppWithAnAspect.class, AspectJAutoProxying.class)) {
            postThrice(context.getBean(Ledger.class));
            assertThat(context.getBean(Auditing.class).audited)
                    .as("admitted calls audited; the rejected one never reaches the aspect")
                    .hasValue(2);
        }
    }
}
