package dev.sluice.boot.actuate;

import dev.sluice.RateLimiterRegistry;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.web.context.WebApplicationContext;

/**
 * The {@code ratelimits} actuator endpoint, when the actuator is present and the endpoint exposed,
 * with its web extension; its delete and write operations need
 * {@code management.endpoint.ratelimits.access=unrestricted}.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@ConditionalOnClass(Endpoint.class)
public class SluiceEndpointAutoConfiguration {

    @Bean
    @ConditionalOnAvailableEndpoint
    RateLimitsEndpoint rateLimitsEndpoint(RateLimiterRegistry registry, RateLimitStatistics statistics,
                                          LimitChanges changes, SluiceProperties properties) {
        return new RateLimitsEndpoint(registry, statistics, changes, KeyMask.of(properties));
    }

    @Bean
    @ConditionalOnBean(RateLimitsEndpoint.class)
    @ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
    @ConditionalOnWebApplication
    RateLimitsEndpointWebExtension rateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint,
                                                                  ApplicationContext context) {
        // WebFlux hands a catch-all selector the path from the first variable on, the limiter's. A web
        // application that is not a servlet one is a reactive one.
        return new RateLimitsEndpointWebExtension(endpoint, !(context instanceof WebApplicationContext));
    }

    /**
     * Warns when the endpoint's write operations are open over HTTP with nothing in front of them.
     *
     * @param environment the application's settings
     * @param context     its beans
     * @return the check, run once every singleton is made
     */
    @Bean
    @ConditionalOnBean(RateLimitsEndpointWebExtension.class)
    EndpointWriteAccessCheck sluiceEndpointWriteAccessCheck(Environment environment, ApplicationContext context) {
        return new EndpointWriteAccessCheck(environment, context);
    }
}
