package dev.sluice.benchmarks;

import static dev.sluice.benchmarks.SluiceDecisionBenchmark.MAXIMUM_KEYS;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.annotation.RateLimited;
import dev.sluice.config.EnableRateLimiting;
import io.github.resilience4j.common.ratelimiter.configuration.CommonRateLimiterConfigurationProperties.InstanceProperties;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.spring6.ratelimiter.configure.RateLimiterConfiguration;
import io.github.resilience4j.spring6.ratelimiter.configure.RateLimiterConfigurationProperties;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Import;

/**
 * A call to an annotated method of a Spring bean, through its proxy: {@code @RateLimited} with a
 * SpEL key beside Resilience4j's {@code @RateLimiter}, and the same method called on the bean
 * itself, without a proxy (the floor: what the call costs without any limit).
 *
 * <p>Resilience4j's annotation has no key: its {@code name} picks the limiter from a registry.
 * A name starting with {@code #} is a SpEL expression, parsed on every call, so
 * {@code name = "#id"} gives each key a limiter of its own, the nearest to a key; the registry
 * keeps every name it has seen. A plain name is one limiter for every call.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AnnotatedCallBenchmark {

    private AnnotationConfigApplicationContext context;
    private SluiceLimited sluice;
    private Resilience4jLimited resilience4j;
    private SluiceLimited unproxied;

    /**
     * Starts the application context and calls every method once per key, so that the
     * measurement sees limiters and counts that exist.
     *
     * @param keys the keys of the calls
     */
    @Setup
    public void setUp(Keys keys) {
        context = new AnnotationConfigApplicationContext(Wiring.class);
        sluice = context.getBean(SluiceLimited.class);
        resilience4j = context.getBean(Resilience4jLimited.class);
        unproxied = new SluiceLimited();
        for (String key : keys.names()) {
            sluice.call(key);
            resilience4j.call(key);
        }
        resilience4j.callOneLimiter(keys.names()[0]);
    }

    /** Closes the application context. */
    @TearDown
    public void close() {
        context.close();
    }

    /**
     * {@code @RateLimited(key = "#id", ...)} through the bean's proxy.
     *
     * @param cursor the key of the call
     * @return what the method returned
     */
    @Benchmark
    public String sluice(Keys.Cursor cursor) {
        return sluice.call(cursor.next());
    }

    /**
     * Resilience4j's {@code @RateLimiter(name = "#id")} through the bean's proxy.
     *
     * @param cursor the key of the call
     * @return what the method returned
     */
    @Benchmark
    public String resilience4j(Keys.Cursor cursor) {
        return resilience4j.call(cursor.next());
    }

    /**
     * Resilience4j's {@code @RateLimiter(name = "annotated")} through the bean's proxy: one limiter
     * for every key.
     *
     * @param cursor the argument of the call, which does not choose the limiter
     * @return what the method returned
     */
    @Benchmark
    public String resilience4jOneLimiter(Keys.Cursor cursor) {
        return resilience4j.callOneLimiter(cursor.next());
    }

    /**
     * The method of {@link #sluice}, called on an instance with no proxy: no limit at all.
     *
     * @param cursor the key of the call
     * @return what the method returned
     */
    @Benchmark
    public String unproxied(Keys.Cursor cursor) {
        return unproxied.call(cursor.next());
    }

    /** A bean limited by Sluice, with the limit of {@link SluiceDecisionBenchmark} and its default algorithm. */
    public static class SluiceLimited {

        /**
         * Returns its argument.
         *
         * @param id the key the call is counted for
         * @return {@code id}
         */
        @RateLimited(name = "annotated", key = "#id", limit = SluiceDecisionBenchmark.LIMIT, window = "1s")
        public String call(String id) {
            return id;
        }
    }

    /** A bean limited by Resilience4j, with the same limit. */
    public static class Resilience4jLimited {

        /**
         * Returns its argument, limited by a limiter per key.
         *
         * @param id the name of the limiter the call is counted by
         * @return {@code id}
         */
        @io.github.resilience4j.ratelimiter.annotation.RateLimiter(name = "#id")
        public String call(String id) {
            return id;
        }

        /**
         * Returns its argument, limited by one limiter whatever the argument.
         *
         * @param id any value
         * @return {@code id}
         */
        @io.github.resilience4j.ratelimiter.annotation.RateLimiter(name = "annotated")
        public String callOneLimiter(String id) {
            return id;
        }
    }

    /**
     * Both libraries configured as a plain Spring application configures them: Sluice with
     * {@code @EnableRateLimiting} and a store sized for the keys, Resilience4j with its Spring
     * configuration and, as default for every limiter, the limit of the other benchmarks.
     */
    @Configuration(proxyBeanMethods = false)
    @EnableRateLimiting
    @EnableAspectJAutoProxy
    @Import(RateLimiterConfiguration.class)
    static class Wiring {

        @Bean
        RateLimitStore rateLimitStore() {
            return InMemoryRateLimitStore.builder().maximumKeys(MAXIMUM_KEYS).build();
        }

        @Bean
        RateLimiterConfigurationProperties resilience4jProperties() {
            RateLimiterConfig config = PeerDecisionBenchmark.resilience4jConfig();
            RateLimiterConfigurationProperties properties = new RateLimiterConfigurationProperties();
            properties.getConfigs().put("default", new InstanceProperties()
                    .setLimitForPeriod(config.getLimitForPeriod())
                    .setLimitRefreshPeriod(config.getLimitRefreshPeriod())
                    .setTimeoutDuration(config.getTimeoutDuration()));
            return properties;
        }

        @Bean
        SluiceLimited sluiceLimited() {
            return new SluiceLimited();
        }

        @Bean
        Resilience4jLimited resilience4jLimited() {
            return new Resilience4jLimited();
        }
    }
}
