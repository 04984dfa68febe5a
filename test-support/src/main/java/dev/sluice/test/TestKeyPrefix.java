package dev.sluice.test;

import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;

/**
 * {@link AutoConfigureSluiceTest.Store#CONFIGURED}: the Redis store writes under a key prefix of
 * the test's own, the configured one followed by {@code -test-} and a random suffix, so that
 * clearing it before each test never deletes keys the application or another test run wrote.
 */
@Configuration(proxyBeanMethods = false)
class TestKeyPrefix {

    static final String PROPERTY = "sluice.redis.key-prefix";

    @Bean
    static BeanFactoryPostProcessor sluiceTestKeyPrefix() {
        return new OwnPrefix();
    }

    /** Sets the prefix before any bean binds Sluice's settings. */
    private static final class OwnPrefix implements BeanFactoryPostProcessor, EnvironmentAware {

        private ConfigurableEnvironment environment;

        @Override
        public void setEnvironment(Environment environment) {
            this.environment = (ConfigurableEnvironment) environment;
        }

        @Override
        public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
            String prefix = environment.getProperty(PROPERTY, "sluice") + "-test-"
                    + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
            environment.getPropertySources().addFirst(new MapPropertySource("sluiceTestKeyPrefix", Map.of(PROPERTY, prefix)));
        }
    }
}
