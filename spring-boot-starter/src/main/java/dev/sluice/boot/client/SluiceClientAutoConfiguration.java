package dev.sluice.boot.client;

import dev.sluice.RateLimiterRegistry;
import dev.sluice.boot.actuate.LimitChanges;
import dev.sluice.boot.autoconfigure.PropertiesLimitOverrides;
import dev.sluice.boot.autoconfigure.SluiceAutoConfiguration;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.OutboundLimiters;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.util.ClassUtils;

/**
 * {@code sluice.client.rules}: limits on the application's calls to other HTTP APIs, applied to
 * every {@code RestClient.Builder}, {@code RestTemplateBuilder} and {@code WebClient.Builder}
 * Spring Boot provides, and through them to the {@code @HttpExchange} clients it makes. A client
 * built without them ({@code RestClient.create()}) is not limited. Without Spring Web there is no
 * such client, and nothing here.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "sluice.enabled", matchIfMissing = true)
@ConditionalOnClass(name = "org.springframework.web.util.pattern.PathPattern")
public class SluiceClientAutoConfiguration {

    private static final System.Logger LOGGER = System.getLogger(SluiceClientAutoConfiguration.class.getName());

    /**
     * The client rules, checked and registered as the application starts.
     *
     * @param properties  the settings
     * @param overrides   the limits from configuration, for the rules' plans
     * @param registry    where the rules' limiters are registered
     * @param beanFactory resolves {@code @bean} references in the rules' expressions
     * @param signals     counts what partners say, when metrics are on
     * @param changes     the live changes of limits, told where the rules' own tiers are while
     *                    partners lower them, and of the pauses partners ask for, which they tell
     *                    the instances sharing the store
     * @return the rules
     */
    @Bean
    ClientRateLimitRules sluiceClientRateLimitRules(SluiceProperties properties, PropertiesLimitOverrides overrides,
                                                    RateLimiterRegistry registry, BeanFactory beanFactory,
                                                    ObjectProvider<PartnerSignals> signals,
                                                    ObjectProvider<LimitChanges> changes) {
        SluiceProperties.Client client = properties.getClient();
        LimitChanges live = changes.getIfAvailable();
        ClientRateLimitRules rules = new ClientRateLimitRules(client.getRules(), client.getMaxPause(), overrides,
                registry, properties.getKeyError(), new BeanFactoryResolver(beanFactory),
                signals.getIfAvailable(() -> PartnerSignals.NONE), live == null ? rule -> { } : live::paused);
        if (live != null) {
            rules.rules().stream().filter(rule -> rule.adapted() != null)
                    .forEach(rule -> live.ownTiers(rule.name(), rule.adapted()::ownTiers));
        }
        return rules;
    }

    /**
     * The limiters of the client rules, whose refusals the web layer answers as a service this
     * application depends on being unavailable, never as the client's 429.
     *
     * @param rules the client rules
     * @return their limiters' names
     */
    @Bean
    OutboundLimiters sluiceOutboundLimiters(ClientRateLimitRules rules) {
        return new OutboundLimiters(rules.rules().stream().map(ClientRateLimitRules.Rule::name).toList());
    }

    /**
     * Warns at start-up when client rules are configured and Spring Boot provides none of the
     * builders they apply to: no client would be limited.
     *
     * @param rules the client rules
     * @param beans the application's beans
     * @return the check
     */
    @Bean
    SmartInitializingSingleton sluiceClientBuildersCheck(ClientRateLimitRules rules, ListableBeanFactory beans) {
        return () -> {
            ClassLoader loader = beans instanceof ConfigurableBeanFactory factory ? factory.getBeanClassLoader() : null;
            boolean anyBuilder = ClientLine.BUILDERS.stream().anyMatch(type -> ClassUtils.isPresent(type, loader)
                    && beans.getBeanNamesForType(ClassUtils.resolveClassName(type, loader)).length > 0);
            if (!rules.rules().isEmpty() && !anyBuilder) {
                LOGGER.log(System.Logger.Level.WARNING, "Client rules " + rules.rules().stream()
                        .map(ClientRateLimitRules.Rule::name).toList() + " limit the clients built from the"
                        + " RestClient.Builder, RestTemplateBuilder and WebClient.Builder Spring Boot provides, and"
                        + " this application has none of them, so no client is limited: add "
                        + ClientLine.BUILDER_DEPENDENCIES + ", and build the clients from its builder");
            }
        };
    }

    /** The rules on {@code RestClient} and {@code RestTemplate}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {ClientLine.BLOCKING_CLIENTS, "org.springframework.web.client.RestClient"})
    static class BlockingClientsConfiguration {

        @Bean
        ClientLine.RestClients sluiceClientRulesRestClientCustomizer(ClientRateLimitRules rules) {
            return builder -> {
                if (!rules.rules().isEmpty()) {
                    builder.requestInterceptor(new ClientRateLimitInterceptor(rules));
                }
            };
        }

        @Bean
        ClientLine.RestTemplates sluiceClientRulesRestTemplateCustomizer(ClientRateLimitRules rules) {
            return template -> {
                if (!rules.rules().isEmpty()) {
                    template.getInterceptors().add(new ClientRateLimitInterceptor(rules));
                }
            };
        }
    }

    /** The rules on {@code WebClient}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {ClientLine.REACTIVE_CLIENTS, "org.springframework.web.reactive.function.client.WebClient"})
    static class ReactiveClientsConfiguration {

        @Bean
        ClientLine.WebClients sluiceClientRulesWebClientCustomizer(ClientRateLimitRules rules) {
            return builder -> {
                if (!rules.rules().isEmpty()) {
                    builder.filter(new ClientRateLimitFilter(rules));
                }
            };
        }
    }
}
