package dev.sluice.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Parses {@code key} and {@code cost} expressions once, checking every {@code #variable}
 * against the method's parameters, and builds the per-call evaluation context.
 */
final class Expressions {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final RateLimitVariables variables;
    private final @Nullable BeanResolver beanResolver;

    Expressions(RateLimitVariables variables, @Nullable BeanResolver beanResolver) {
        this.variables = variables;
        this.beanResolver = beanResolver;
    }

    /**
     * Parses an expression of {@code method}.
     *
     * @throws RateLimitConfigurationException when it does not parse or names an unknown variable
     */
    SpelExpression parse(Method method, String attribute, String text) {
        SpelExpression expression;
        try {
            expression = (SpelExpression) PARSER.parseExpression(text);
        } catch (ParseException e) {
            throw RateLimitConfigurationException.invalid(method, attribute,
                    "'" + text + "' is not a valid SpEL expression: " + e.getMessage(), e);
        }
        Set<String> known = knownVariables(method);
        List<String> used = new ArrayList<>();
        collectVariables(expression.getAST(), used);
        for (String name : used) {
            if (!known.contains(name)) {
                throw RateLimitConfigurationException.invalid(method, attribute, "'" + text + "' refers to #" + name
                        + ", which is not a parameter of the method nor a known variable (known: "
                        + String.join(", ", known.stream().map(n -> "#" + n).toList()) + ")"
                        + (parameterNames.getParameterNames(method) == null
                                ? "; parameter names are not available: compile with '-parameters' or use #p0, #p1, ..."
                                : ""));
            }
        }
        return expression;
    }

    private Set<String> knownVariables(Method method) {
        Set<String> known = new LinkedHashSet<>();
        String[] names = parameterNames.getParameterNames(method);
        if (names != null) {
            known.addAll(List.of(names));
        }
        for (int i = 0; i < method.getParameterCount(); i++) {
            known.add("p" + i);
            known.add("a" + i);
        }
        known.add("root");
        known.add("this");
        known.addAll(variables.names());
        return known;
    }

    private static void collectVariables(SpelNode node, List<String> names) {
        if (node instanceof VariableReference) {
            // VariableReference has no name accessor; its AST form is "#name".
            names.add(node.toStringAST().substring(1));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            collectVariables(node.getChild(i), names);
        }
    }

    /** The context of one call: arguments by name and position, extra variables, beans. */
    EvaluationContext context(Method method, @Nullable Object[] args, @Nullable Object target, Class<?> targetClass) {
        ExpressionRoot root = new ExpressionRoot(method, args, target, targetClass);
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, args, parameterNames) {
            @Override
            public @Nullable Object lookupVariable(String name) {
                Object value = super.lookupVariable(name);
                if (value == null && variables.names().contains(name) && !isParameter(method, name)) {
                    return variables.value(name);
                }
                return value;
            }
        };
        if (beanResolver != null) {
            context.setBeanResolver(beanResolver);
        }
        return context;
    }

    private boolean isParameter(Method method, String name) {
        String[] names = parameterNames.getParameterNames(method);
        return names != null && List.of(names).contains(name);
    }
}
