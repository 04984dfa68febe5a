package dev.sluice.boot.web;

import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.aop.RateLimitVariables;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelMessage;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.DataBindingMethodResolver;
import org.springframework.expression.spel.support.DataBindingPropertyAccessor;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.expression.spel.support.StandardTypeConverter;
import org.springframework.util.ObjectUtils;

/**
 * The expressions of configured rules ({@code sluice.http.rules}, {@code sluice.client.rules}):
 * parsed and checked when the application starts, evaluated per request.
 *
 * <p>They come from configuration, not from code, so they get no more power than they need: they
 * read properties and call public instance methods of the rule's variables and beans
 * ({@code @name}), but name no type ({@code T(...)}), construct nothing ({@code new ...}), and
 * reach neither {@code getClass()} nor class loaders. An expression with {@code T(...)} or
 * {@code new}, or a variable the rule does not have, fails start-up, naming its rule.
 *
 * <p>Public for the expressions of other modules' configured limits, such as the Spring Cloud
 * Gateway routes of {@code sluice-spring-cloud-gateway}, which take the same variables and the
 * same restrictions.
 */
public final class RuleExpressions {

    private final Set<String> variables;
    /** How the rule's variables are described in messages: "#ip (the client address), ...". */
    private final String described;
    /**
     * What the expressions may use, built once: each request's context takes these delegates,
     * and with them the caches of the property accessor and method resolver.
     */
    private final StandardEvaluationContext delegates;

    /**
     * Creates the expressions of one kind of rule.
     *
     * @param variables the variables the rules' expressions may use
     * @param described the variables, described for messages
     * @param beans     resolves {@code @name}, or {@code null} for none
     */
    public RuleExpressions(Set<String> variables, String described, @Nullable BeanResolver beans) {
        this.variables = Set.copyOf(variables);
        this.described = described;
        this.delegates = delegates(beans);
    }

    /**
     * Parses and checks one expression of a rule.
     *
     * @param property the expression's property, for messages
     * @param name     the rule's name
     * @param text     the expression; blank for none
     * @return the expression, or {@code null} when there is none
     * @throws SluiceConfigurationException when it is not valid SpEL or uses what a rule may not
     */
    public @Nullable SpelExpression parse(String property, String name, String text) {
        if (text.isBlank()) {
            return null;
        }
        SpelExpression expression;
        try {
            expression = (SpelExpression) new SpelExpressionParser().parseExpression(text);
        } catch (ParseException e) {
            throw new SluiceConfigurationException(property + " (" + name + ") '" + text + "' is not a valid SpEL"
                    + " expression: " + e.getMessage(), "Correct the expression.", e);
        }
        String refused = refusedConstruct(expression.getAST());
        if (refused != null) {
            throw new SluiceConfigurationException(property + " (" + name + ") '" + text + "' uses " + refused
                    + ", which a rule's expression may not", "A rule's expressions may read " + described
                    + " and call beans (@name); put anything else in a bean's method.", null);
        }
        for (String variable : RateLimitVariables.referencedBy(expression)) {
            if (!variables.contains(variable)) {
                throw new SluiceConfigurationException(property + " (" + name + ") '" + text + "' refers to #"
                        + variable + ", which a rule does not have", "Use " + described + ".", null);
            }
        }
        return expression;
    }

    /**
     * A context for one request's expressions, with its variables.
     *
     * @param values the variables' values, by name without {@code #}
     * @return the context
     */
    public StandardEvaluationContext context(Map<String, @Nullable Object> values) {
        StandardEvaluationContext context = new StandardEvaluationContext();
        delegates.applyDelegatesTo(context);
        values.forEach(context::setVariable);
        return context;
    }

    /**
     * A rule's condition for one request.
     *
     * @throws RateLimitKeyException when it fails or gives anything but {@code true} or {@code false}
     */
    static boolean condition(String rule, SpelExpression condition, @Nullable StandardEvaluationContext context) {
        Object value;
        try {
            value = condition.getValue(context);
        } catch (RuntimeException e) {
            throw failed(rule, "condition expression '" + condition.getExpressionString() + "' failed: "
                    + e.getMessage(), e);
        }
        if (value instanceof Boolean decided) {
            return decided;
        }
        // The type only: the value may be the client's address or another part of the request.
        throw failed(rule, "condition expression '" + condition.getExpressionString() + "' evaluated to "
                + (value == null ? "null" : "a " + value.getClass().getSimpleName()) + ", not true or false", null);
    }

    /**
     * A rule's key or plan for one request.
     *
     * @param rule       the rule's name, for messages
     * @param attribute  {@code key} or {@code plan}; a key must not be blank
     * @param expression the expression, or {@code null} for none
     * @param context    the request's context
     * @param none       the value without an expression
     * @return the value as text
     * @throws RateLimitKeyException when the expression fails, or a key is null or blank
     */
    public static @Nullable String value(String rule, String attribute, @Nullable SpelExpression expression,
                                  @Nullable StandardEvaluationContext context, @Nullable String none) {
        if (expression == null) {
            return none;
        }
        Object value;
        try {
            value = expression.getValue(context);
        } catch (RuntimeException e) {
            throw failed(rule, attribute + " expression '" + expression.getExpressionString() + "' failed: "
                    + e.getMessage(), e);
        }
        String text = value == null ? null : ObjectUtils.nullSafeToString(value);
        if (attribute.equals("key") && (text == null || text.isBlank())) {
            throw failed(rule, "key expression '" + expression.getExpressionString() + "' evaluated to "
                    + (text == null ? "null" : "a blank string") + "; a key must identify the caller", null);
        }
        return text;
    }

    private static RateLimitKeyException failed(String rule, String problem, @Nullable Throwable cause) {
        return new RateLimitKeyException(rule, "Rate limit rule '" + rule + "' cannot count this request: its "
                + problem, cause);
    }

    /** {@code T(...)} or {@code new ...} somewhere in an expression, as written; {@code null} if neither. */
    private static @Nullable String refusedConstruct(SpelNode node) {
        if (node instanceof TypeReference || node instanceof ConstructorReference) {
            return node.toStringAST();
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            String refused = refusedConstruct(node.getChild(i));
            if (refused != null) {
                return refused;
            }
        }
        return null;
    }

    /**
     * Read-only properties and public instance methods, except those declared by {@code Object}
     * or {@code Class} and any of a class loader; no types, no constructors; beans.
     */
    private static StandardEvaluationContext delegates(@Nullable BeanResolver beans) {
        StandardEvaluationContext delegates = new StandardEvaluationContext();
        delegates.setPropertyAccessors(List.of(DataBindingPropertyAccessor.forReadOnlyAccess()));
        delegates.setMethodResolvers(List.of(DataBindingMethodResolver.forInstanceMethodInvocation()));
        delegates.setConstructorResolvers(List.of());
        delegates.setIndexAccessors(List.of());
        delegates.setTypeConverter(new StandardTypeConverter());
        delegates.setTypeLocator(type -> {
            throw new SpelEvaluationException(SpelMessage.TYPE_NOT_FOUND, type);
        });
        if (beans != null) {
            delegates.setBeanResolver(beans);
        }
        return delegates;
    }
}
