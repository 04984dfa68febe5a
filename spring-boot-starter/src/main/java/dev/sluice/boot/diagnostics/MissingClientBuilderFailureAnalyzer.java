package dev.sluice.boot.diagnostics;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Names the dependency that makes the HTTP client builder an application asked for, when it
 * has client rules ({@code sluice.client.rules}): these limit the clients Spring Boot's builders
 * make, and on Spring Boot 4 {@code spring-boot-starter-web} no longer brings a
 * {@code RestClient.Builder}.
 */
class MissingClientBuilderFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException>
        implements Ordered {

    private final Environment environment;

    MissingClientBuilderFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
        Class<?> type = cause.getBeanType();
        if (type == null || !Binder.get(environment).bind("sluice.client.rules[0].host", String.class).isBound()) {
            return null;
        }
        String dependency = dependency(type.getName(), String.valueOf(SpringBootVersion.getVersion()).startsWith("3."));
        if (dependency == null) {
            return null;
        }
        String builder = type.getName().substring(type.getName().lastIndexOf('.') + 1).replace('$', '.');
        return new FailureAnalysis("A bean needs a " + builder + ", which Spring Boot " + SpringBootVersion.getVersion()
                + " makes only with " + dependency + " on the class path. The client rules of sluice.client.rules"
                + " limit the clients such builders make.", "Add the dependency org.springframework.boot:"
                + dependency + ", and build the clients from the builder Spring Boot provides.", cause);
    }

    /** The starter that brings a builder on a Spring Boot line; null for any other type. */
    static @Nullable String dependency(String builderType, boolean springBoot3) {
        return switch (builderType) {
            case "org.springframework.web.client.RestClient$Builder", "org.springframework.boot.restclient.RestTemplateBuilder",
                    "org.springframework.boot.web.client.RestTemplateBuilder" ->
                    springBoot3 ? "spring-boot-starter-web" : "spring-boot-starter-restclient";
            case "org.springframework.web.reactive.function.client.WebClient$Builder" ->
                    springBoot3 ? "spring-boot-starter-webflux" : "spring-boot-starter-webclient";
            default -> null;
        };
    }

    @Override
    public int getOrder() {
        // Before Spring Boot's own report of a missing bean, which cannot name the dependency.
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
