package dev.sluice.test;

import dev.sluice.RateLimitStore;
import dev.sluice.Sleeper;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

/** What {@link AutoConfigureSluiceTest} adds to a test's application context. */
@Configuration(proxyBeanMethods = false)
class SluiceTestConfiguration {

    @Bean
    @Primary
    TestClock sluiceTestClock(ObjectProvider<RateLimitStore> stores) {
        return new TestClock(Instant.now().truncatedTo(ChronoUnit.DAYS), stores);
    }

    @Bean
    @Primary
    Sleeper sluiceTestSleeper(TestClock sluiceTestClock) {
        return new Sleeper() {
            @Override
            public void sleep(Duration duration) {
                sluiceTestClock.advance(duration);
            }

            @Override
            public CompletionStage<Void> sleepAsync(Duration duration) {
                sleep(duration);
                return CompletableFuture.completedFuture(null);
            }
        };
    }

    @Bean
    SluiceTestReset sluiceTestReset(TestClock sluiceTestClock, ObjectProvider<RateLimitStore> stores) {
        return new SluiceTestReset(sluiceTestClock, stores);
    }
}
