package dev.sluice.config;

import dev.sluice.annotation.RateLimited;
import dev.sluice.annotation.RateLimits;
import dev.sluice.aop.ExpressionRoot;
import dev.sluice.aop.RateLimitedAspect;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

/**
 * What a native image of an application using Sluice needs beyond what Spring infers from its
 * beans: the reflection that annotation parsing, SpEL keys, the woven aspect and the engine do.
 * It covers {@code sluice-annotations} and {@code sluice-core} too, which have no Spring to
 * register hints with. Registered in {@code META-INF/spring/aot.factories}.
 *
 * <ul>
 *   <li>{@link RateLimited}, {@link RateLimits} and {@link EnableRateLimiting}: Spring's annotation
 *       support reads their attributes reflectively, and synthesizes {@code @RateLimited} as a JDK
 *       proxy when it comes from a composed annotation;</li>
 *   <li>{@link ExpressionRoot}: SpEL calls its getters for {@code #root.method},
 *       {@code #root.target} and the others;</li>
 *   <li>{@link RateLimitedAspect}'s {@code aspectOf} and {@code hasAspect}, which AspectJ's
 *       {@code Aspects} calls reflectively to configure the woven aspect;</li>
 *   <li>the fields the in-memory store and its key state reach through {@code VarHandle}s;</li>
 *   <li>the classes whose presence decides whether reactive return types and Kotlin suspend
 *       functions are limited on subscription, when the application has them.</li>
 * </ul>
 */
final class RateLimitingRuntimeHints implements RuntimeHintsRegistrar {

    /** Classes looked up by name at run time to tell whether a library is present. */
    private static final List<String> PRESENCE_CHECKED = List.of("reactor.core.publisher.Mono",
            "kotlinx.coroutines.reactor.MonoKt");

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        for (Class<?> annotation : List.of(RateLimited.class, RateLimits.class, EnableRateLimiting.class)) {
            hints.reflection().registerType(annotation, MemberCategory.INVOKE_PUBLIC_METHODS);
        }
        hints.proxies().registerJdkProxy(RateLimited.class);

        hints.reflection().registerType(ExpressionRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);

        hints.reflection().registerType(RateLimitedAspect.class, type -> type
                .withMethod("aspectOf", List.of(), ExecutableMode.INVOKE)
                .withMethod("hasAspect", List.of(), ExecutableMode.INVOKE));

        hints.reflection().registerType(TypeReference.of("dev.sluice.InMemoryRateLimitStore"), type -> type
                .withField("latestMillis")
                .withField("setBackMillis"));
        hints.reflection().registerType(TypeReference.of("dev.sluice.KeyState"), type -> type.withField("flags"));

        for (String name : PRESENCE_CHECKED) {
            if (ClassUtils.isPresent(name, classLoader)) {
                hints.reflection().registerType(TypeReference.of(name));
            }
        }
    }
}
