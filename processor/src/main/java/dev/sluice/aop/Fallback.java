package dev.sluice.aop;

import dev.sluice.RateLimitExceededException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.core.CoroutinesUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The method a limiter calls instead of throwing when it rejects a call
 * ({@code @RateLimited(fallbackMethod)}): found and checked once, when the limited method's
 * annotations are parsed.
 */
final class Fallback {

    private final Method method;
    /** Whether it takes the rejection after the limited method's parameters. */
    private final boolean takesRejection;
    /** Whether it is a Kotlin suspend function, called as a publisher of its result. */
    private final boolean suspending;

    private Fallback(Method method, boolean takesRejection, boolean suspending) {
        this.method = method;
        this.takesRejection = takesRejection;
        this.suspending = suspending;
        ReflectionUtils.makeAccessible(method);
    }

    /**
     * The fallback {@code name} of {@code limited}: a method of {@code targetClass} (or a
     * superclass) taking the limited method's parameters, optionally followed by a
     * {@link RateLimitExceededException} or a supertype of it, static exactly when the limited
     * method is, and returning what the limited method may return. One taking the rejection is
     * preferred.
     *
     * @throws RateLimitConfigurationException naming both methods when there is none
     */
    static Fallback find(Method limited, Class<?> targetClass, String name) {
        boolean suspending = KotlinDetector.isSuspendingFunction(limited);
        // A suspend function's continuation is its last parameter; its fallback takes one there too.
        List<Class<?>> parameters = new ArrayList<>(Arrays.asList(limited.getParameterTypes()));
        Class<?> continuation = suspending ? parameters.remove(parameters.size() - 1) : null;
        List<Method> named = new ArrayList<>();
        ReflectionUtils.doWithMethods(ClassUtils.getUserClass(targetClass), named::add,
                candidate -> candidate.getName().equals(name) && !candidate.isBridge() && !candidate.isSynthetic());
        Method withoutRejection = null;
        for (Method candidate : named) {
            List<Class<?>> given = new ArrayList<>(Arrays.asList(candidate.getParameterTypes()));
            if (continuation != null) {
                if (given.isEmpty() || given.get(given.size() - 1) != continuation) {
                    continue;
                }
                given.remove(given.size() - 1);
            }
            if (Modifier.isStatic(candidate.getModifiers()) != Modifier.isStatic(limited.getModifiers())
                    || !limited.getReturnType().isAssignableFrom(candidate.getReturnType())) {
                continue;
            }
            if (given.equals(parameters)) {
                withoutRejection = candidate;
            } else if (given.size() == parameters.size() + 1 && given.subList(0, parameters.size()).equals(parameters)
                    && given.get(parameters.size()).isAssignableFrom(RateLimitExceededException.class)) {
                return new Fallback(candidate, true, suspending);
            }
        }
        if (withoutRejection != null) {
            return new Fallback(withoutRejection, false, suspending);
        }
        String types = parameters.stream().map(Class::getSimpleName).collect(Collectors.joining(", "));
        throw RateLimitConfigurationException.invalid(limited, "fallbackMethod", "'" + name + "' names no method of "
                + targetClass.getName() + " that can stand in for it: it needs "
                + (Modifier.isStatic(limited.getModifiers()) ? "a static " : "an instance ") + (suspending ? "suspend " : "")
                + "method " + name + "(" + types + ") or " + name + "(" + types + (types.isEmpty() ? "" : ", ")
                + "RateLimitExceededException) returning " + limited.getReturnType().getSimpleName()
                + (named.isEmpty() ? "; the class has no method of that name"
                        : "; found " + named.stream().map(RateLimitConfigurationException::describe)
                                .collect(Collectors.joining(", "))));
    }

    /**
     * Calls the fallback for a rejected call.
     *
     * @param target    the object called; {@code null} for a static method
     * @param args      the call's arguments, without a suspend function's continuation
     * @param rejection why the call was rejected
     * @return what the fallback returned; for a suspend function, a publisher of its result
     * @throws Throwable what the fallback threw
     */
    @Nullable Object call(@Nullable Object target, @Nullable Object[] args, RateLimitExceededException rejection)
            throws Throwable {
        Object[] given = args != null ? args : new Object[0];
        if (takesRejection) {
            given = Arrays.copyOf(given, given.length + 1);
            given[given.length - 1] = rejection;
        }
        if (suspending) {
            return CoroutinesUtils.invokeSuspendingFunction(method, target, given);
        }
        try {
            return method.invoke(target, given);
        } catch (InvocationTargetException e) {
            throw e.getTargetException();
        }
    }

    /** The fallback method, for messages. */
    Method method() {
        return method;
    }
}
