package dev.sluice.aop;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.ParseException;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * Parses {@code key} and {@code cost} expressions once, checking every {@code #variable}
 * against the method's parameters and, where a parameter's declared class tells, every property
 * and method the expression reads from it; and evaluates them for each call. An expression that
 * only names a parameter or a contributed variable ({@code #phone}, {@code #p0}, {@code #ip}) is
 * read directly; any other is compiled to bytecode once it has run a hundred times (falling back
 * to interpreting it should compiled code fail) and evaluated in a light per-call context.
 */
final class Expressions {

    /** The variables an expression evaluated after the call reads: what it returned, and what it threw. */
    static final Set<String> OUTCOME_VARIABLES = Set.of("result", "exception");

    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final RateLimitVariables variables;
    /**
     * Holds what every call's context shares: property accessors, method resolvers, the type
     * locator and converter, and the bean resolver. Only read after construction.
     */
    private final StandardEvaluationContext shared = new StandardEvaluationContext();

    Expressions(RateLimitVariables variables, @Nullable BeanResolver beanResolver) {
        this.variables = variables;
        if (beanResolver != null) {
            shared.setBeanResolver(beanResolver);
        }
        // Set up every lazily made delegate now, so that calls only ever read them.
        shared.getPropertyAccessors();
        shared.getIndexAccessors();
        shared.getConstructorResolvers();
        shared.getMethodResolvers();
        shared.getTypeLocator();
        shared.getTypeConverter();
    }

    /**
     * Parses an expression of {@code method}.
     *
     * @throws RateLimitConfigurationException when it does not parse or names an unknown variable
     */
    MethodExpression parse(Method method, String attribute, String text) {
        return parse(method, attribute, text, Set.of());
    }

    /**
     * Parses an expression of {@code method} that may also read {@code extra} variables, such as
     * {@link #OUTCOME_VARIABLES}.
     *
     * @throws RateLimitConfigurationException when it does not parse or names an unknown variable
     */
    MethodExpression parse(Method method, String attribute, String text, Set<String> extra) {
        SpelExpression expression;
        try {
            SpelParserConfiguration configuration = new SpelParserConfiguration(SpelCompilerMode.MIXED,
                    method.getDeclaringClass().getClassLoader());
            expression = (SpelExpression) new SpelExpressionParser(configuration).parseExpression(text);
        } catch (ParseException e) {
            throw RateLimitConfigurationException.invalid(method, attribute,
                    "'" + text + "' is not a valid SpEL expression: " + e.getMessage(), e);
        }
        Set<String> known = knownVariables(method);
        known.addAll(extra);
        for (String name : RateLimitVariables.referencedBy(expression)) {
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
        // The extra variables are the context's, even where a parameter has the name.
        return extra.isEmpty() ? direct(expression, arguments(method))
                : new MethodExpression(expression, arguments(method), -1, null);
    }

    /** The expression, read directly when it only names a parameter or a contributed variable. */
    private MethodExpression direct(SpelExpression expression, Arguments arguments) {
        // #root and #this are the root object, whatever the parameters are called.
        if (expression.getAST() instanceof VariableReference reference
                && !reference.toStringAST().equals("#root") && !reference.toStringAST().equals("#this")) {
            String name = reference.toStringAST().substring(1);
            Integer position = arguments.positions.get(name);
            boolean contributed = variables.names().contains(name);
            if (position != null && (!contributed || arguments.declared.contains(name))) {
                return new MethodExpression(expression, arguments, position, null);
            }
            if (position == null && contributed) {
                return new MethodExpression(expression, arguments, -1, name);
            }
        }
        return new MethodExpression(expression, arguments, -1, null);
    }

    /**
     * The parameters of a method that expressions can name: all of them, but for the
     * continuation a Kotlin {@code suspend} function takes last, which is the caller's, not an
     * argument (calls of one are evaluated without it).
     */
    static int parameterCount(Method method) {
        int count = method.getParameterCount();
        return KotlinDetector.isSuspendingFunction(method) ? count - 1 : count;
    }

    /**
     * How a method's arguments are named in expressions: by position ({@code #p0}, {@code #a0})
     * and by parameter name, a later name taking the place of an earlier one as
     * {@link MethodBasedEvaluationContext} does.
     */
    Arguments arguments(Method method) {
        String[] names = parameterNames.getParameterNames(method);
        int count = names != null ? Math.min(names.length, parameterCount(method)) : parameterCount(method);
        Map<String, Integer> positions = new HashMap<>();
        Set<String> declared = new HashSet<>();
        for (int i = 0; i < count; i++) {
            positions.put("a" + i, i);
            positions.put("p" + i, i);
            if (names != null && names[i] != null) {
                positions.put(names[i], i);
                declared.add(names[i]);
            }
        }
        return new Arguments(count, Map.copyOf(positions), Set.copyOf(declared));
    }

    /**
     * The arguments of a method as expressions name them, and the variables its calls see.
     */
    final class Arguments {

        /** The parameters, as many as names when names are known. */
        private final int count;
        /** The position each name stands for. */
        private final Map<String, Integer> positions;
        /** The parameter names the method declares. */
        private final Set<String> declared;

        private Arguments(int count, Map<String, Integer> positions, Set<String> declared) {
            this.count = count;
            this.positions = positions;
            this.declared = declared;
        }

        /** The value of the parameter at {@code position}, as {@link MethodBasedEvaluationContext} gives it. */
        @Nullable Object value(@Nullable Object[] args, int position) {
            if (args == null || args.length == 0) {
                return null;
            }
            if (args.length > count && position == count - 1) {
                // The remaining arguments, as the varargs array of the last parameter.
                return Arrays.copyOfRange(args, position, args.length);
            }
            return position < args.length ? args[position] : null;
        }

        /**
         * The variable {@code name} of a call: the argument it names, or else a contributed
         * variable of that name, unless a parameter has it.
         */
        @Nullable Object variable(@Nullable Object[] args, String name) {
            Integer position = positions.get(name);
            Object value = position != null ? value(args, position) : null;
            if (value == null && variables.names().contains(name) && !declared.contains(name)) {
                return variables.value(name);
            }
            return value;
        }

        /** What every call's context shares. */
        StandardEvaluationContext shared() {
            return shared;
        }
    }

    /** A {@code key} or {@code cost} expression of one method, parsed once. */
    final class MethodExpression {

        private final SpelExpression expression;
        private final Arguments arguments;
        /** For a bare reference to a parameter, its position; otherwise -1. */
        private final int position;
        /** For a bare reference to a contributed variable, its name. */
        private final @Nullable String variable;

        private MethodExpression(SpelExpression expression, Arguments arguments, int position,
                                 @Nullable String variable) {
            this.expression = expression;
            this.arguments = arguments;
            this.position = position;
            this.variable = variable;
        }

        /** Whether evaluating it takes a {@linkplain #context call's context}. */
        boolean needsContext() {
            return position < 0 && variable == null;
        }

        /** The expression as written. */
        String text() {
            return expression.getExpressionString();
        }

        /** Whether it reads the variable {@code name}. */
        boolean reads(String name) {
            return RateLimitVariables.referencedBy(expression).contains(name);
        }

        /** The contributed variables it reads: those it names that no parameter of the method has. */
        List<String> contributedVariables() {
            return RateLimitVariables.referencedBy(expression).stream()
                    .filter(name -> variables.names().contains(name) && !arguments.positions.containsKey(name)
                            && !arguments.declared.contains(name))
                    .toList();
        }

        /**
         * The expression's value for a call.
         *
         * @param args    the call's arguments
         * @param context the call's context, when {@link #needsContext()}
         */
        @Nullable Object value(@Nullable Object[] args, @Nullable EvaluationContext context) {
            if (position >= 0) {
                return arguments.value(args, position);
            }
            if (variable != null) {
                return variables.value(variable);
            }
            // Given the root object, compiled code needs no typed value of it.
            return context instanceof CallContext call ? expression.getValue(call, call.root)
                    : expression.getValue(context);
        }
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
        for (int i = 0; i < parameterCount(method); i++) {
            if (variable.equals("p" + i) || variable.equals("a" + i)
                    || names != null && i < names.length && variable.equals(names[i])) {
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
            known.addAll(List.of(names).subList(0, Math.min(names.length, parameterCount(method))));
        }
        for (int i = 0; i < parameterCount(method); i++) {
            known.add("p" + i);
            known.add("a" + i);
        }
        known.add("root");
        known.add("this");
        known.addAll(variables.names());
        return known;
    }

    /**
     * The context of one call: arguments by name and position, extra variables, beans, and
     * {@code #root}.
     */
    EvaluationContext context(Method method, Arguments arguments, @Nullable Object[] args, @Nullable Object target,
                              Class<?> targetClass) {
        return new CallContext(new ExpressionRoot(method, args, target, targetClass), arguments);
    }

    /**
     * The context of one call once it has run: the call's, with {@code #result} and
     * {@code #exception} taking the place of any parameter or variable of those names.
     */
    EvaluationContext outcomeContext(Method method, Arguments arguments, @Nullable Object[] args,
                                     @Nullable Object target, Class<?> targetClass, @Nullable Object result,
                                     @Nullable Throwable exception) {
        CallContext context = new CallContext(new ExpressionRoot(method, args, target, targetClass), arguments);
        context.outcome = new Outcome(result, exception);
        return context;
    }

    /** What a call returned or threw. */
    private record Outcome(@Nullable Object result, @Nullable Throwable exception) {
    }

    /**
     * The evaluation context of one call, as a {@link MethodBasedEvaluationContext} would be,
     * but made of a few fields: its delegates are shared, and arguments are read where they are.
     */
    private static final class CallContext implements EvaluationContext {

        private final ExpressionRoot root;
        private final Arguments arguments;
        /** Variables an expression assigned; rare. */
        private @Nullable Map<String, Object> assigned;
        /** For an expression evaluated after the call, its outcome. */
        private @Nullable Outcome outcome;

        CallContext(ExpressionRoot root, Arguments arguments) {
            this.root = root;
            this.arguments = arguments;
        }

        /** Evaluations are given the root object itself: SpEL seldom asks for it this way. */
        @Override
        public TypedValue getRootObject() {
            return new TypedValue(root);
        }

        @Override
        public @Nullable Object lookupVariable(String name) {
            if (outcome != null && OUTCOME_VARIABLES.contains(name)) {
                return name.equals("result") ? outcome.result() : outcome.exception();
            }
            if (assigned != null && assigned.containsKey(name)) {
                return assigned.get(name);
            }
            return arguments.variable(root.getArgs(), name);
        }

        @Override
        public void setVariable(@Nullable String name, @Nullable Object value) {
            if (name != null) {
                if (assigned == null) {
                    assigned = new HashMap<>();
                }
                if (value != null) {
                    assigned.put(name, value);
                } else {
                    assigned.remove(name);
                }
            }
        }

        @Override
        public List<PropertyAccessor> getPropertyAccessors() {
            return arguments.shared().getPropertyAccessors();
        }

        @Override
        public List<IndexAccessor> getIndexAccessors() {
            return arguments.shared().getIndexAccessors();
        }

        @Override
        public List<ConstructorResolver> getConstructorResolvers() {
            return arguments.shared().getConstructorResolvers();
        }

        @Override
        public List<MethodResolver> getMethodResolvers() {
            return arguments.shared().getMethodResolvers();
        }

        @Override
        public @Nullable BeanResolver getBeanResolver() {
            return arguments.shared().getBeanResolver();
        }

        @Override
        public TypeLocator getTypeLocator() {
            return arguments.shared().getTypeLocator();
        }

        @Override
        public TypeConverter getTypeConverter() {
            return arguments.shared().getTypeConverter();
        }

        @Override
        public TypeComparator getTypeComparator() {
            return arguments.shared().getTypeComparator();
        }

        @Override
        public OperatorOverloader getOperatorOverloader() {
            return arguments.shared().getOperatorOverloader();
        }
    }
}
