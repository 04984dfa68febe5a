package dev.sluice.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

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

    /**
     * The variables an expression refers to ({@code #name}), in the order they appear, so that
     * an expression naming a variable nobody provides can be refused when the application starts.
     *
     * @param expression a parsed expression
     * @return the names, without {@code #}
     */
    static List<String> referencedBy(SpelExpression expression) {
        List<String> names = new ArrayList<>();
        collect(expression.getAST(), names);
        return names;
    }

    private static void collect(SpelNode node, List<String> names) {
        if (node instanceof VariableReference) {
            // VariableReference has no name accessor; its AST form is "#name".
            names.add(node.toStringAST().substring(1));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            collect(node.getChild(i), names);
        }
    }
}
