package dev.sluice.aop;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * Parses {@code key} and {@code cost} expressions once, checking every {@code #variable}
 * against the method's parameters and, where a parameter's declared class tells, every property
 * and method the expression reads from it; and builds the per-call evaluation context.
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
        checkMembers(method, attribute, text, expression.getAST());
        return expression;
    }

    /**
     * Fails for a property or method that a chain starting at a parameter ({@code #user.name},
     * {@code #p0.toLowerCase()}) reads from a class that cannot have it. The chain is followed
     * while each class is known: a concrete class, not {@code Object}, an interface, an abstract
     * class, a map (whose properties are its keys) or an array; beyond that, the run time decides.
     */
    private void checkMembers(Method method, String attribute, String text, SpelNode node) {
        if (node instanceof CompoundExpression && node.getChild(0) instanceof VariableReference variable) {
            Class<?> type = parameterType(method, variable.toStringAST().substring(1));
            for (int i = 1; i < node.getChildCount() && type != null && isClosed(type); i++) {
                SpelNode step = node.getChild(i);
                if (step instanceof PropertyOrFieldReference property) {
                    type = propertyType(method, attribute, text, type, property.getName());
                } else if (step instanceof MethodReference called) {
                    type = returnType(method, attribute, text, type, called.getName(), called.getChildCount());
                } else {
                    type = null;
                }
            }
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            checkMembers(method, attribute, text, node.getChild(i));
        }
    }

    /** The declared class of the parameter a variable names, or {@code null} when it names none. */
    private @Nullable Class<?> parameterType(Method method, String variable) {
        String[] names = parameterNames.getParameterNames(method);
        for (int i = 0; i < method.getParameterCount(); i++) {
            if (variable.equals("p" + i) || variable.equals("a" + i) || names != null && variable.equals(names[i])) {
                return method.getParameterTypes()[i];
            }
        }
        return null;
    }

    /** Whether the members of a value of this declared class are known from the class. */
    private static boolean isClosed(Class<?> type) {
        return type != Object.class && !type.isInterface() && !type.isArray() && !type.isPrimitive()
                && !Modifier.isAbstract(type.getModifiers()) && !Map.class.isAssignableFrom(type);
    }

    /**
     * The class of a property as SpEL reads it (a getter, a record-style accessor or a public
     * field), or {@code null} when that is not known.
     */
    private static @Nullable Class<?> propertyType(Method method, String attribute, String text, Class<?> type,
                                                   String name) {
        String capitalized = StringUtils.capitalize(name);
        for (String accessor : List.of("get" + capitalized, "is" + capitalized, name)) {
            Method found = ClassUtils.getMethodIfAvailable(type, accessor);
            if (found != null && Modifier.isPublic(found.getModifiers())) {
                return found.getGenericReturnType() instanceof Class<?> returned ? returned : null;
            }
        }
        Field field = ReflectionUtils.findField(type, name);
        if (field != null && Modifier.isPublic(field.getModifiers())) {
            return field.getGenericType() instanceof Class<?> declared ? declared : null;
        }
        throw RateLimitConfigurationException.invalid(method, attribute, "'" + text + "' reads property '" + name
                + "' of " + type.getName() + ", which has no such property (no public get" + capitalized + "(), "
                + name + "() or field " + name + ")");
    }

    /** The class a method returns, or {@code null} when that is not known (overloads, generics). */
    private static @Nullable Class<?> returnType(Method method, String attribute, String text, Class<?> type,
                                                 String name, int arguments) {
        Set<Type> returned = new LinkedHashSet<>();
        for (Method candidate : type.getMethods()) {
            if (candidate.getName().equals(name) && (candidate.getParameterCount() == arguments
                    || candidate.isVarArgs() && arguments >= candidate.getParameterCount() - 1)) {
                returned.add(candidate.getGenericReturnType());
            }
        }
        if (returned.isEmpty()) {
            throw RateLimitConfigurationException.invalid(method, attribute, "'" + text + "' calls " + name + "()"
                    + " with " + arguments + (arguments == 1 ? " argument" : " arguments") + ", which no public method"
                    + " of " + type.getName() + " takes");
        }
        return returned.size() == 1 && returned.iterator().next() instanceof Class<?> single ? single : null;
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
