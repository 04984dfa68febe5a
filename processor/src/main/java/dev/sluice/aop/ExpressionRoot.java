package dev.sluice.aop;

import java.lang.reflect.Method;
import org.jspecify.annotations.Nullable;

/**
 * The {@code #root} object of {@code key} and {@code cost} expressions:
 * {@code #root.method}, {@code #root.methodName}, {@code #root.target},
 * {@code #root.targetClass} and {@code #root.args}.
 */
public final class ExpressionRoot {

    private final Method method;
    private final @Nullable Object[] args;
    private final @Nullable Object target;
    private final Class<?> targetClass;

    ExpressionRoot(Method method, @Nullable Object[] args, @Nullable Object target, Class<?> targetClass) {
        this.method = method;
        this.args = args;
        this.target = target;
        this.targetClass = targetClass;
    }

    /**
     * The method being called.
     *
     * @return the method
     */
    public Method getMethod() {
        return method;
    }

    /**
     * The name of the method being called.
     *
     * @return the method name
     */
    public String getMethodName() {
        return method.getName();
    }

    /**
     * The arguments of the call.
     *
     * @return the arguments
     */
    public @Nullable Object[] getArgs() {
        return args;
    }

    /**
     * The object called; {@code null} for a static method.
     *
     * @return the target
     */
    public @Nullable Object getTarget() {
        return target;
    }

    /**
     * The class of the object called.
     *
     * @return the target class
     */
    public Class<?> getTargetClass() {
        return targetClass;
    }
}
