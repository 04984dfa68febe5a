package dev.sluice.boot;

import dev.sluice.aop.RateLimitVariables;
import dev.sluice.config.MethodRateLimiterCustomizer;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Sluice in Spring MVC applications: {@code #ip} and {@code #request} in key expressions,
 * rate-limit headers on responses, {@code 429} for rejected calls and {@code 503} for calls that
 * could not be checked under {@code FAIL_CLOSED}.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
public class SluiceWebMvcAutoConfiguration {

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
        RateLimitVariables variables = new RateLimitVariables() {
            @Override
            public Set<String> names() {
                return Set.of("ip", "request");
            }

            @Override
            public @Nullable Object value(String name) {
                if (!(RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes)) {
                    return null;
                }
                HttpServletRequest request = attributes.getRequest();
                return name.equals("ip") ? clientIp.resolve(request) : request;
            }
        };
        return builder -> builder.variables(variables).callScopedListener(headers);
    }

    /**
     * The 429 and 503 answers, ahead of the application's own exception handlers unless they are
     * ordered before {@code Ordered.HIGHEST_PRECEDENCE + 1000}; 429 bodies are of type
     * {@code sluice.web.problem-type}.
     *
     * @param headers    the header writer
     * @param properties the settings
     * @return the handler
     */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE + 1000)
    RateLimitExceptionHandler sluiceRateLimitExceptionHandler(RateLimitResponseHeaders headers,
                                                              SluiceProperties properties) {
        return new RateLimitExceptionHandler(headers, properties.getWeb().getProblemType());
    }
}
