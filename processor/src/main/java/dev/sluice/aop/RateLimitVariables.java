package dev.sluice.aop;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Extra variables for {@code key} and {@code cost} expressions, such as {@code #ip} and
 * {@code #request}, which the Spring Boot starter contributes for web requests. Method
 * parameters of the same name take precedence.
 */
public interface RateLimitVariables {

    /** No extra variables. */
    RateLimitVariables NONE = new RateLimitVariables() {
        @Override
        public Set<String> names() {
            return Set.of();
        }

        @Override
        public @Nullable Object value(String name) {
            return null;
        }
    };

    /**
     * The names this contributes, known up front so that expressions can be checked when the
     * application starts.
     *
     * @return the variable names, without {@code #}
     */
    Set<String> names();

    /**
     * The value of a variable for the current call, looked up only when an expression uses it.
     *
     * @param name one of {@link #names()}
     * @return the value, or {@code null} when there is none (outside a web request, say)
     */
    @Nullable Object value(String name);
}
