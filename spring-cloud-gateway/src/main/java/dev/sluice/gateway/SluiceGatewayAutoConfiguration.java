package dev.sluice.gateway;

import dev.sluice.RateLimiterRegistry;
import dev.sluice.aop.LimitOverrides;
import dev.sluice.boot.actuate.LimitChanges;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.ClientIpResolver;
import dev.sluice.boot.web.reactive.ReactiveRateLimitExceptionHandler;
import dev.sluice.boot.web.reactive.ReactiveRateLimitHeaders;
import dev.sluice.boot.web.reactive.SluiceWebFluxAutoConfiguration;
import dev.sluice.boot.web.servlet.SluiceWebMvcAutoConfiguration;
import dev.sluice.config.RateLimitingConfiguration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.event.RefreshRoutesResultEvent;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.ServerCodecConfigurer;

/**
 * Sluice on Spring Cloud Gateway routes: on the WebFlux gateway the {@code RateLimiter} bean
 * {@code sluiceRateLimiter} ({@link SluiceGatewayRateLimiter}), Sluice's filter on the routes that
 * name it ({@link SluiceRequestRateLimiterGatewayFilterFactory}) and the key resolver
 * {@code sluiceKeyResolver} ({@link SluiceKeyResolver}); on the Server MVC gateway the filter
 * {@code RateLimit} of {@link SluiceFilterFunctions}. The limits of both are checked, and their
 * limiters registered, when the application starts; {@code sluice.enabled=false} turns them off
 * with the rest of Sluice.
 */
@AutoConfiguration(after = {SluiceAutoConfiguration.class, SluiceWebFluxAutoConfiguration.class,
    SluiceWebMvcAutoConfiguration.class},
        beforeName = {"org.springframework.cloud.gateway.config.GatewayAutoConfiguration",
            "org.springframework.cloud.gateway.server.mvc.GatewayServerMvcAutoConfiguration"})
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
public class SluiceGatewayAutoConfiguration {

    /**
     * The limiters of gateway routes, as both gateways check and decide them.
     *
     * @param registry    where the routes' limiters are registered
     * @param changes     the live changes of limits, which a route defined again keeps
     * @param overrides   {@code sluice.limits}, the limiters routes name
     * @param properties  the settings, for {@code sluice.key-error}
     * @param clientIp    the client address behind {@code #ip}
     * @param beanFactory resolves {@code @bean} in expressions
     * @return the route limits
     */
    @Bean
    @ConditionalOnWebApplication
    RouteLimits sluiceGatewayRouteLimits(@Qualifier(RateLimitingConfiguration.REGISTRY_BEAN_NAME) RateLimiterRegistry registry,
                                         LimitChanges changes, LimitOverrides overrides, SluiceProperties properties,
                                         ClientIpResolver clientIp, BeanFactory beanFactory) {
        return new RouteLimits(registry, changes, overrides, properties.getKeyError(), clientIp, beanFactory);
    }

    /** The WebFlux gateway's {@code RequestRateLimiter} filter, deciding with Sluice. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = "org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter")
    static class WebFluxGatewayConfiguration {

        /**
         * The rate limiter routes name with {@code rate-limiter: "#{@sluiceRateLimiter}"}.
         *
         * @param configurationService binds each route's options
         * @param limits               the route limits
         * @param headers              writes the rate-limit headers
         * @param answers              Sluice's 429, 503 and 400 problems
         * @param codecs               the application's codecs, which write the problems
         * @return the rate limiter
         */
        @Bean
        SluiceGatewayRateLimiter sluiceRateLimiter(ConfigurationService configurationService, RouteLimits limits,
                                                   ReactiveRateLimitHeaders headers,
                                                   ReactiveRateLimitExceptionHandler answers,
                                                   ServerCodecConfigurer codecs) {
            return new SluiceGatewayRateLimiter(configurationService, limits, headers, answers, codecs.getWriters());
        }

        /**
         * Gives the routes limited by {@code sluiceRateLimiter} Sluice's filter, in place of the
         * gateway's {@code RequestRateLimiter} filter factory, which still makes the other routes'.
         *
         * @return the post-processor
         */
        @Bean
        static BeanPostProcessor sluiceRequestRateLimiterFilters() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    return bean instanceof RequestRateLimiterGatewayFilterFactory gateway
                            && !(bean instanceof SluiceRequestRateLimiterGatewayFilterFactory)
                            ? new SluiceRequestRateLimiterGatewayFilterFactory(gateway) : bean;
                }
            };
        }

        /**
         * The key resolver that hands every request to the route's key expression; not a default
         * candidate, so that the gateway's own default resolver stays the default.
         *
         * @return the key resolver
         */
        @Bean(defaultCandidate = false)
        SluiceKeyResolver sluiceKeyResolver() {
            return new SluiceKeyResolver();
        }

        /**
         * Once the gateway has refreshed its routes, forgets those it no longer has, and the
         * limiters of their own tiers.
         *
         * @param rateLimiter the rate limiter
         * @return the listener
         */
        @Bean
        ApplicationListener<RefreshRoutesResultEvent> sluiceRemovedRoutes(SluiceGatewayRateLimiter rateLimiter) {
            return event -> {
                if (event.isSuccess() && event.getSource() instanceof RouteLocator routes) {
                    // The routes just cached: read without waiting on anything.
                    routes.getRoutes().map(Route::getId).collect(Collectors.toSet())
                            .subscribe(rateLimiter::retainRoutes);
                }
            };
        }

        /**
         * Checks the Sluice options of the routes of {@code spring.cloud.gateway.server.webflux.routes}
         * when the application starts, before {@code sluice.limits} is checked for names no limiter
         * has, rather than when the gateway first builds its routes: their options are bound, and
         * their {@code RequestRateLimiter} filters made, as the gateway makes them.
         *
         * @param gateway              the gateway's properties
         * @param rateLimiter          the rate limiter
         * @param configurationService binds the filters' arguments
         * @param filters              the {@code RequestRateLimiter} filter factory
         * @return the check
         */
        @Bean
        SmartInitializingSingleton sluiceGatewayRoutesCheck(GatewayProperties gateway,
                                                            SluiceGatewayRateLimiter rateLimiter,
                                                            ConfigurationService configurationService,
                                                            ObjectProvider<RequestRateLimiterGatewayFilterFactory> filters) {
            return () -> {
                RequestRateLimiterGatewayFilterFactory factory = filters.getIfAvailable();
                for (RouteDefinition route : gateway.getRoutes()) {
                    for (FilterDefinition filter : route.getFilters()) {
                        Map<String, Object> args = new LinkedHashMap<>(filter.getArgs());
                        rateLimiter.onApplicationEvent(new FilterArgsEvent(gateway, route.getId(), args));
                        if (factory != null && factory.name().equals(filter.getName())) {
                            RequestRateLimiterGatewayFilterFactory.Config config = configurationService.with(factory)
                                    .name(filter.getName()).properties(filter.getArgs()).bind();
                            factory.apply(route.getId(), config);
                        }
                    }
                }
            };
        }
    }

    /** The Server MVC gateway's {@code RateLimit} filter. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = "org.springframework.cloud.gateway.server.mvc.filter.FilterSupplier")
    static class ServerMvcGatewayConfiguration {

        /**
         * Makes {@code RateLimit} a filter of routes defined in properties.
         *
         * @return the supplier
         */
        @Bean
        SluiceFilterFunctions.FilterSupplier sluiceFilterFunctionsSupplier() {
            return new SluiceFilterFunctions.FilterSupplier();
        }

        /**
         * Binds the filters made while the application's routes were built to the application,
         * checking their options, before {@code sluice.limits} is checked for names no limiter has.
         *
         * @param context the application
         * @return the binding
         */
        @Bean
        SmartInitializingSingleton sluiceGatewayFiltersCheck(ApplicationContext context) {
            return () -> SluiceFilterFunctions.bindMadeBy(Thread.currentThread(), context);
        }
    }
}
