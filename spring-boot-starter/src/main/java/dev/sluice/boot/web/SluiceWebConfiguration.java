package dev.sluice.boot.web;

import dev.sluice.RateLimiterRegistry;
import dev.sluice.aop.LimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * What Sluice needs in a web application whichever its stack, Spring MVC or WebFlux: the client
 * address resolver behind {@code #ip}, and how the limiters of {@code sluice.http.rules} are built.
 *
 * <p>Public for the auto-configurations of Spring MVC and WebFlux, in their own packages, which
 * import it.
 */
@Configuration(proxyBeanMethods = false)
public class SluiceWebConfiguration {

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
     * The limiters of {@code sluice.http.rules}, checked and registered as the application starts;
     * each stack's configuration declares them with the parser its handler mappings use.
     *
     * @param properties  the settings
     * @param overrides   the limits from configuration, for the rules' plans
     * @param registry    where the rules' limiters are registered
     * @param beanFactory resolves {@code @bean} references in the rules' expressions
     * @param paths       the application's parser of handler paths, {@code null} for Spring's default
     * @return the rules
     */
    public static HttpRateLimitRules httpRateLimitRules(SluiceProperties properties, LimitOverrides overrides,
                                                        RateLimiterRegistry registry, BeanFactory beanFactory,
                                                        @Nullable PathPatternParser paths) {
        return new HttpRateLimitRules(properties.getHttp().getRules(), overrides, registry, properties.getKeyError(),
                paths != null ? paths : PathPatternParser.defaultInstance, new BeanFactoryResolver(beanFactory));
    }
}
