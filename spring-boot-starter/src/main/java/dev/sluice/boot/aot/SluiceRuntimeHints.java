package dev.sluice.boot.aot;

import dev.sluice.boot.actuate.RateLimitsEndpoint;
import dev.sluice.boot.actuate.RateLimitsEndpointWebExtension;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

/**
 * The starter's run-time reflection:
 *
 * <ul>
 *   <li>binding {@code sluice.*} onto {@link SluiceProperties} and its nested types, at start-up
 *       and when the endpoint binds a changed tier;</li>
 *   <li>the {@code ratelimits} endpoint's operations, which the actuator invokes reflectively, and
 *       the records it answers with, which are written as JSON;</li>
 *   <li>the classes the starter looks up by name to tell which Spring Boot line it runs on;</li>
 *   <li>the requests that key, cost, plan and rule expressions reach as {@code #request}, on Spring
 *       MVC and on WebFlux, when the application has them.</li>
 * </ul>
 */
final class SluiceRuntimeHints implements RuntimeHintsRegistrar {

    /**
     * The classes {@code SpringBootLine} looks up: Spring Boot 3.5's, Spring Boot 4's and Spring
     * Framework 7's.
     */
    static final List<String> SPRING_BOOT_LINE_CLASSES = List.of(
            "org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty",
            "org.springframework.boot.EnvironmentPostProcessor",
            "org.springframework.core.retry.RetryTemplate");

    /** What {@code #request} is, by interface and by the class a server hands out. */
    static final List<String> REQUEST_TYPES = List.of(
            "jakarta.servlet.ServletRequest",
            "jakarta.servlet.http.HttpServletRequest",
            "org.apache.catalina.connector.RequestFacade",
            "org.springframework.http.HttpMessage",
            "org.springframework.http.HttpRequest",
            "org.springframework.http.HttpHeaders",
            "org.springframework.http.server.reactive.ServerHttpRequest",
            "org.springframework.http.server.reactive.ReactorServerHttpRequest");

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        BindableRuntimeHintsRegistrar.forTypes(SluiceProperties.class).registerHints(hints, classLoader);

        hints.reflection().registerType(RateLimitsEndpoint.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(RateLimitsEndpointWebExtension.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(),
                RateLimitsEndpoint.RateLimitsDescriptor.class, RateLimitsEndpoint.LimiterDescriptor.class);

        for (String name : SPRING_BOOT_LINE_CLASSES) {
            hints.reflection().registerType(TypeReference.of(name));
        }
        for (String name : REQUEST_TYPES) {
            if (ClassUtils.isPresent(name, classLoader)) {
                hints.reflection().registerType(TypeReference.of(name), MemberCategory.INVOKE_PUBLIC_METHODS);
            }
        }
    }
}
