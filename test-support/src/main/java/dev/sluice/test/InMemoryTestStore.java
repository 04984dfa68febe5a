package dev.sluice.test;

import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.tck.MutableClock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

/**
 * {@link AutoConfigureSluiceTest.Store#IN_MEMORY}: the store the limiters decide in, on the test
 * clock. Imported with the test, before Sluice's auto-configuration, it stands in for the store
 * that {@code sluice.store} would make, which is then never built.
 */
@Configuration(proxyBeanMethods = false)
class InMemoryTestStore {

    @Bean
    @Primary
    InMemoryRateLimitStore sluiceTestStore(MutableClock sluiceTestClock) {
        return InMemoryRateLimitStore.builder().clock(sluiceTestClock).build();
    }
}
