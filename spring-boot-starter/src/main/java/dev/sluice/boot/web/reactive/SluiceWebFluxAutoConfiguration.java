package dev.sluice.boot.web.reactive;

import dev.sluice.RateLimiterRegistry;
import dev.sluice.aop.MethodRateLimiter;
import dev.sluice.aop.RateLimitVariables;
import dev.sluice.boot.autoconfigure.PropertiesLimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.ClientIpResolver;
import dev.sluice.boot.web.HttpRateLimitRules;
import dev.sluice.boot.web.OutboundLimiters;
import dev.sluice.boot.web.RequestVariables;
import dev.sluice.boot.web.SluiceWebConfiguration;
import dev.sluice.boot.web.servlet.SluiceWebMvcAutoConfiguration;
import dev.sluice.config.MethodRateLimiterCustomizer;
import dev.sluice.config.RateLimitingConfiguration;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.handler.AbstractHandlerMapping;
import org.springframework.web.server.ServerWebExchange;

/**
 * Sluice in Spring WebFlux applications, answering as {@link SluiceWebMvcAutoConfiguration} does
 * in Spring MVC: {@code #ip} and {@code #request} (the {@code ServerHttpRequest}) in the
 * expressions of reactive methods, rate-limit headers on responses, {@code 429} for rejected
 * calls, {@code 503} for calls that could not be checked under {@code FAIL_CLOSED} and {@code 400}
 * for calls whose key cannot be worked out, and the limits of {@code sluice.http.rules}, decided
 * without blocking.
 *
 * <p>A method returning {@code Mono} or {@code Flux} is decided per subscription, with the
 * request's exchange in the subscriber's Reactor Context, where a
 * {@link ServerWebExchangeContextFilter} puts it (registered here unless the application has
 * one). Other limited methods are decided when they are called, where no request is known:
 * {@code #ip} or {@code #request} in their expressions fail start-up, and a warning lists those
 * that decide synchronously, usually on an event-loop thread.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
@Import(SluiceWebConfiguration.class)
public class SluiceWebFluxAutoConfiguration {

    /** Before Spring Security's filter chain (-100) and the exchange's context filter. */
    static final int HTTP_RULES_FILTER_ORDER = -110;

    /** Before Spring Security's filter chain (-100), as Spring MVC's request context filter. */
    static final int EXCHANGE_CONTEXT_FILTER_ORDER = -105;

    @Bean
    ReactiveRateLimitHeaders sluiceReactiveRateLimitHeaders(SluiceProperties properties) {
        return new ReactiveRateLimitHeaders(properties.getWeb().getHeaders());
    }

    /**
     * Puts each request's exchange in the Reactor Context of its handling, where reactive limited
     * methods find it; unless the application registers this filter itself.
     *
     * @return the filter
     */
    @Bean
    @ConditionalOnMissingBean(ServerWebExchangeContextFilter.class)
    @Order(EXCHANGE_CONTEXT_FILTER_ORDER)
    ServerWebExchangeContextFilter sluiceServerWebExchangeContextFilter() {
        return new ServerWebExchangeContextFilter();
    }

    /**
     * Adds {@code #ip} and {@code #request} and the header writer to the engine, both read from
     * the exchange of the subscription being decided.
     *
     * @param clientIp the client address resolver
     * @param headers  the header writer
     * @return the customizer
     */
    @Bean
    MethodRateLimiterCustomizer sluiceWebCustomizer(ClientIpResolver clientIp, ReactiveRateLimitHeaders headers) {
        RateLimitVariables variables = new RequestVariables<ServerHttpRequest>(() -> {
            ServerWebExchange exchange = ReactiveRateLimitHeaders.currentExchange();
            return exchange == null ? null : exchange.getRequest();
        }, request -> clientIp(clientIp, request));
        return builder -> builder.variables(variables).callScopedListener(headers);
    }

    /**
     * The 429, 503 and 400 answers, ahead of the application's own exception handlers unless
     * they are ordered before {@code Ordered.HIGHEST_PRECEDENCE + 1000}; 429 bodies are of type
     * {@code sluice.web.problem-type}.
     *
     * @param headers    the header writer
     * @param properties the settings
     * @param outbound   the limiters of outbound calls, if client rules are configured
     * @return the handler
     */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE + 1000)
    ReactiveRateLimitExceptionHandler sluiceRateLimitExceptionHandler(ReactiveRateLimitHeaders headers,
                                                                      SluiceProperties properties,
                                                                      ObjectProvider<OutboundLimiters> outbound) {
        return new ReactiveRateLimitExceptionHandler(headers, properties.getWeb().getProblemType(),
                () -> outbound.getIfAvailable(() -> OutboundLimiters.NONE));
    }

    /**
     * The limiters of {@code sluice.http.rules}, their paths parsed as WebFlux parses those of
     * annotated handlers (the parser of {@code requestMappingHandlerMapping}, case-insensitive when
     * {@code WebFluxConfigurer.configurePathMatching} says so).
     *
     * @param properties  the settings
     * @param overrides   the limits from configuration, for the rules' plans
     * @param registry    where the rules' limiters are registered
     * @param beanFactory resolves {@code @bean} references in the rules' expressions
     * @param handlers    WebFlux's mapping of annotated handlers
     * @return the rules
     */
    @Bean
    HttpRateLimitRules sluiceHttpRateLimitRules(SluiceProperties properties, PropertiesLimitOverrides overrides,
                                                RateLimiterRegistry registry, BeanFactory beanFactory,
                                                @Qualifier("requestMappingHandlerMapping")
                                                ObjectProvider<AbstractHandlerMapping> handlers) {
        AbstractHandlerMapping mapping = handlers.getIfAvailable();
        return SluiceWebConfiguration.httpRateLimitRules(properties, overrides, registry, beanFactory,
                mapping == null ? null : mapping.getPathPatternParser());
    }

    /**
     * The filter deciding the requests that {@code sluice.http.rules} match. It runs before Spring
     * Security's filter chain (order {@value #HTTP_RULES_FILTER_ORDER}), so that a rejected request
     * costs no authentication; the principal is therefore not known to the rules' expressions yet.
     *
     * @param rules          the rules
     * @param clientIp       the client address resolver
     * @param headers        the header writer
     * @param adapters       the handler adapters, whose exception handling answers refused requests
     * @param resultHandlers write those answers
     * @return the filter
     */
    @Bean
    ReactiveHttpRateLimitFilter sluiceHttpRateLimitFilter(HttpRateLimitRules rules, ClientIpResolver clientIp,
                                                          ReactiveRateLimitHeaders headers,
                                                          ObjectProvider<HandlerAdapter> adapters,
                                                          ObjectProvider<HandlerResultHandler> resultHandlers) {
        return new ReactiveHttpRateLimitFilter(rules, clientIp, headers, adapters, resultHandlers);
    }

    /**
     * Fails start-up for non-reactive limited methods using {@code #ip} or {@code #request}, and
     * warns of those deciding synchronously on the calling thread.
     *
     * @param beanFactory       the beans to check
     * @param methodRateLimiter the engine, which knows the limited methods
     * @return the check
     */
    @Bean
    static ReactiveLimitedMethodsCheck sluiceReactiveLimitedMethodsCheck(ConfigurableListableBeanFactory beanFactory,
            @Qualifier(RateLimitingConfiguration.METHOD_RATE_LIMITER_BEAN_NAME)
            ObjectProvider<MethodRateLimiter> methodRateLimiter) {
        return new ReactiveLimitedMethodsCheck(beanFactory, methodRateLimiter);
    }

    /**
     * The client address of a WebFlux request, through the trusted proxies, as for a servlet
     * request.
     *
     * @param resolver the resolver
     * @param request  the request
     * @return {@code #ip}
     */
    static @Nullable String clientIp(ClientIpResolver resolver, ServerHttpRequest request) {
        InetSocketAddress remote = request.getRemoteAddress();
        String peer = remote == null ? null
                : remote.getAddress() != null ? remote.getAddress().getHostAddress() : remote.getHostString();
        return resolver.resolve(peer, name -> request.getHeaders().getOrEmpty(name));
    }
}
