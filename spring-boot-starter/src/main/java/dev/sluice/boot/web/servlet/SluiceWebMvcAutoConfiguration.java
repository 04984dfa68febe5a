package dev.sluice.boot.web.servlet;

import dev.sluice.RateLimiterRegistry;
import dev.sluice.aop.RateLimitVariables;
import dev.sluice.boot.autoconfigure.PropertiesLimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.ClientIpResolver;
import dev.sluice.boot.web.HttpRateLimitRules;
import dev.sluice.boot.web.OutboundLimiters;
import dev.sluice.boot.web.RequestVariables;
import dev.sluice.boot.web.SluiceWebConfiguration;
import dev.sluice.config.MethodRateLimiterCustomizer;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Collections;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Sluice in Spring MVC applications: {@code #ip} and {@code #request} in key expressions,
 * rate-limit headers on responses, {@code 429} for rejected calls and {@code 503} for calls that
 * could not be checked under {@code FAIL_CLOSED}, and the limits of {@code sluice.http.rules}.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@Import(SluiceWebConfiguration.class)
public class SluiceWebMvcAutoConfiguration {

    @Bean
    RateLimitResponseHeaders sluiceRateLimitResponseHeaders(SluiceProperties properties) {
        return new RateLimitResponseHeaders(properties.getWeb().getHeaders());
    }

    /**
     * Adds {@code #ip} and {@code #request} and the header writer to the engine.
     *
     * @param clientIp the client address resolver
     * @param headers  the header writer
     * @return the customizer
     */
    @Bean
    MethodRateLimiterCustomizer sluiceWebCustomizer(ClientIpResolver clientIp, RateLimitResponseHeaders headers) {
        RateLimitVariables variables = new RequestVariables<HttpServletRequest>(
                () -> RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes
                        ? attributes.getRequest() : null,
                request -> clientIp(clientIp, request));
        return builder -> builder.variables(variables).callScopedListener(headers);
    }

    /**
     * The 429 and 503 answers, ahead of the application's own exception handlers unless they are
     * ordered before {@code Ordered.HIGHEST_PRECEDENCE + 1000}; 429 bodies are of type
     * {@code sluice.web.problem-type}.
     *
     * @param headers    the header writer
     * @param properties the settings
     * @param outbound   the limiters of outbound calls, if client rules are configured
     * @return the handler
     */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE + 1000)
    RateLimitExceptionHandler sluiceRateLimitExceptionHandler(RateLimitResponseHeaders headers,
                                                              SluiceProperties properties,
                                                              ObjectProvider<OutboundLimiters> outbound) {
        return new RateLimitExceptionHandler(headers, properties.getWeb().getProblemType(),
                () -> outbound.getIfAvailable(() -> OutboundLimiters.NONE));
    }

    /**
     * The limiters of {@code sluice.http.rules}, their paths parsed as Spring MVC parses those of
     * handlers ({@code mvcPatternParser}, which {@code WebMvcConfigurer.configurePathMatch} sets).
     *
     * @param properties  the settings
     * @param overrides   the limits from configuration, for the rules' plans
     * @param registry    where the rules' limiters are registered
     * @param beanFactory resolves {@code @bean} references in the rules' expressions
     * @param paths       Spring MVC's parser of handler paths
     * @return the rules
     */
    @Bean
    HttpRateLimitRules sluiceHttpRateLimitRules(SluiceProperties properties, PropertiesLimitOverrides overrides,
                                                RateLimiterRegistry registry, BeanFactory beanFactory,
                                                @Qualifier("mvcPatternParser") ObjectProvider<PathPatternParser> paths) {
        return SluiceWebConfiguration.httpRateLimitRules(properties, overrides, registry, beanFactory,
                paths.getIfAvailable());
    }

    /**
     * The filter deciding the requests that {@code sluice.http.rules} match, registered when
     * there are rules. It runs before Spring Security's filter chain (order
     * {@value #HTTP_RULES_FILTER_ORDER}), so that a rejected request costs no authentication;
     * {@code #request.userPrincipal} is therefore not known to the rules' expressions yet.
     *
     * @param rules             the rules
     * @param clientIp          the client address resolver
     * @param headers           the header writer
     * @param exceptionResolver answers rejected requests as the application would
     * @return the filter's registration
     */
    @Bean
    FilterRegistrationBean<HttpRateLimitFilter> sluiceHttpRateLimitFilter(HttpRateLimitRules rules,
            ClientIpResolver clientIp, RateLimitResponseHeaders headers,
            @Qualifier("handlerExceptionResolver") ObjectProvider<HandlerExceptionResolver> exceptionResolver) {
        FilterRegistrationBean<HttpRateLimitFilter> registration = new FilterRegistrationBean<>(
                new HttpRateLimitFilter(rules, clientIp, headers, exceptionResolver));
        registration.setName("sluiceHttpRateLimitFilter");
        registration.setOrder(HTTP_RULES_FILTER_ORDER);
        registration.setEnabled(!rules.rules().isEmpty());
        return registration;
    }

    /** Before Spring Security's filter chain (-100) and Spring's request context filter (-105). */
    static final int HTTP_RULES_FILTER_ORDER = -110;

    /**
     * The client address of a servlet request, through the trusted proxies.
     *
     * @param resolver the resolver
     * @param request  the request
     * @return {@code #ip}
     */
    static @Nullable String clientIp(ClientIpResolver resolver, HttpServletRequest request) {
        return resolver.resolve(request.getRemoteAddr(), name -> Collections.list(request.getHeaders(name)));
    }
}
