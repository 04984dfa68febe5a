package dev.sluice.benchmarks;

import static dev.sluice.benchmarks.SluiceDecisionBenchmark.MAXIMUM_KEYS;

import dev.sluice.benchmarks.AnnotatedCallBenchmark.SluiceLimited;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The annotated call of {@link AnnotatedCallBenchmark#sluice}, in a Spring Boot application as
 * users run it: the starter's auto-configuration, the actuator and a Prometheus registry
 * ({@code micrometer-registry-prometheus}), so that every decision is counted by
 * {@code sluice.decisions} and the store is timed by {@code sluice.store.latency}. Beside the
 * bare annotated call, it shows what the starter and its metrics add.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BootAnnotatedCallBenchmark {

    private ConfigurableApplicationContext context;
    private SluiceLimited sluice;

    /**
     * Starts the application and calls the method once per key, so that the measurement sees
     * limiters and counts that exist.
     *
     * @param keys the keys of the calls
     */
    @Setup
    public void setUp(Keys keys) {
        context = new SpringApplicationBuilder(Application.class)
                .web(WebApplicationType.NONE)
                .bannerMode(Banner.Mode.OFF)
                .logStartupInfo(false)
                .properties("sluice.memory.maximum-keys=" + MAXIMUM_KEYS)
                .run();
        MeterRegistry registry = context.getBean(MeterRegistry.class);
        if (!(registry instanceof PrometheusMeterRegistry)) {
            throw new IllegalStateException("expected Spring Boot's Prometheus registry, found " + registry);
        }
        sluice = context.getBean(SluiceLimited.class);
        for (String key : keys.names()) {
            sluice.call(key);
        }
        if (registry.find("sluice.decisions").counters().isEmpty()) {
            throw new IllegalStateException("the starter's metrics are off: no sluice.decisions");
        }
    }

    /** Stops the application. */
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

    /** The application: auto-configured, with the limited bean of {@link AnnotatedCallBenchmark}. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Application {

        @Bean
        SluiceLimited sluiceLimited() {
            return new SluiceLimited();
        }
    }
}
