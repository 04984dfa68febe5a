package dev.sluice.boot;

import dev.sluice.RateLimiterRegistry;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.expression.BeanFactoryResolver;

/**
 * What Sluice needs in a web application whichever its stack, Spring MVC or WebFlux: the client
 * address resolver behind {@code #ip}, and the limiters of {@code sluice.http.rules}.
 */
@Configuration(proxyBeanMethods = false)
class SluiceWebConfiguration {

    /**
     * The client address behind {@code #ip}, believing forwarding headers from
     * {@code sluice.web.trusted-proxies} only, and grouping IPv6 clients by
     * {@code sluice.web.ipv6-prefix}.
     *
     * @param properties the settings
     * @return the resolver
     */
    @Bean
    @ConditionalOnMissingBean
    ClientIpResolver sluiceClientIpResolver(SluiceProperties properties) {
        SluiceProperties.Web web = properties.getWeb();
        return new ClientIpResolver(web.getTrustedProxies(), web.getForwardedHeader(), web.getIpv6Prefix());
    }

    /**
     * The limiters of {@code sluice.http.rules}, checked and registered as the application starts.
     *
     * @param properties  the settings
     * @param overrides   the limits from configuration, for the rules' plans
     * @param registry    where the rules' limiters are registered
     * @param beanFactory resolves {@code @bean} references in the rules' expressions
     * @return the rules
     */
    @Bean
    HttpRateLimitRules sluiceHttpRateLimitRules(SluiceProperties properties, PropertiesLimitOverrides overrides,
                                                RateLimiterRegistry registry, BeanFactory beanFactory) {
        return new HttpRateLimitRules(properties.getHttp().getRules(), overrides, registry, properties.getKeyError(),
                new BeanFactoryResolver(beanFactory));
    }
}
