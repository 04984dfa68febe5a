package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.annotation.RateLimited;
import dev.sluice.annotation.RateLimits;
import dev.sluice.aop.ExpressionRoot;
import dev.sluice.aop.RateLimitedAspect;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

class RateLimitingRuntimeHintsTest {

    private final RuntimeHints hints = new RuntimeHints();

    @BeforeEach
    void registerAsSpringAotDoes() {
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class)
                .forEach(registrar -> registrar.registerHints(hints, getClass().getClassLoader()));
    }

    @Test
    void annotationAttributesCanBeReadAndComposedAnnotationsSynthesized() {
        assertThat(RuntimeHintsPredicates.reflection().onType(RateLimited.class)
                .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(RateLimits.class)
                .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(EnableRateLimiting.class)
                .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
        assertThat(RuntimeHintsPredicates.proxies().forInterfaces(RateLimited.class)).accepts(hints);
    }

    @Test
    void expressionsCanCallTheRootObjectsGetters() throws NoSuchMethodException {
        assertThat(RuntimeHintsPredicates.reflection()
                .onMethodInvocation(ExpressionRoot.class.getMethod("getTargetClass"))).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection()
                .onMethodInvocation(ExpressionRoot.class.getMethod("getArgs"))).accepts(hints);
    }

    @Test
    void aspectJCanFindTheWovenAspectsSingleton() throws NoSuchMethodException {
        assertThat(RuntimeHintsPredicates.reflection()
                .onMethodInvocation(RateLimitedAspect.class.getMethod("aspectOf"))).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection()
                .onMethodInvocation(RateLimitedAspect.class.getMethod("hasAspect"))).accepts(hints);
    }

    @Test
    void theEnginesVarHandlesFindTheirFields() throws ClassNotFoundException {
        assertThat(RuntimeHintsPredicates.reflection()
                .onFieldAccess("dev.sluice.InMemoryRateLimitStore", "latestMillis")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection()
                .onFieldAccess("dev.sluice.InMemoryRateLimitStore", "setBackMillis")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onFieldAccess("dev.sluice.KeyState", "flags")).accepts(hints);
    }

    @Test
    void reactorCanBeFoundByNameWhenTheApplicationHasIt() {
        assertThat(RuntimeHintsPredicates.reflection().onType(reactor.core.publisher.Mono.class)).accepts(hints);
    }
}
