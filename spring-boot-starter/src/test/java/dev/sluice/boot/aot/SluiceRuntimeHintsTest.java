package dev.sluice.boot.aot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.actuate.RateLimitsEndpoint;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;

class SluiceRuntimeHintsTest {

    private final RuntimeHints hints = new RuntimeHints();

    SluiceRuntimeHintsTest() {
        new SluiceRuntimeHints().registerHints(hints, getClass().getClassLoader());
    }

    @Test
    void nestedPropertiesCanBeBound() {
        assertThat(RuntimeHintsPredicates.reflection().onType(SluiceProperties.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(SluiceProperties.TierProperties.class)).accepts(hints);
    }

    @Test
    void theEndpointsOperationsCanBeInvokedAndItsAnswersWritten() {
        assertThat(RuntimeHintsPredicates.reflection().onType(RateLimitsEndpoint.class)
                .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
        // Reached through the answer's record components only.
        assertThat(RuntimeHintsPredicates.reflection().onType(RateLimitsEndpoint.TierDescriptor.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(RateLimitsEndpoint.QueueDescriptor.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(RateLimitsEndpoint.ChangeDescriptor.class)).accepts(hints);
    }

    @Test
    void everyClassTheSpringBootLineCheckLooksUpCanBeFound() throws ClassNotFoundException, IllegalAccessException {
        List<String> lookedUp = new ArrayList<>();
        for (Field field : Class.forName("dev.sluice.boot.diagnostics.SpringBootLine").getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class
                    && field.getName().endsWith("_CLASS")) {
                field.setAccessible(true);
                lookedUp.add((String) field.get(null));
            }
        }

        assertThat(lookedUp).hasSize(3).containsExactlyInAnyOrderElementsOf(SluiceRuntimeHints.SPRING_BOOT_LINE_CLASSES);
        for (String name : lookedUp) {
            assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(name))).as(name).accepts(hints);
        }
    }

    @Test
    void expressionsCanCallTheRequestsMethods() {
        assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of("jakarta.servlet.http.HttpServletRequest"))
                .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection()
                .onType(TypeReference.of("org.springframework.http.server.reactive.ServerHttpRequest"))
                .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
    }
}
