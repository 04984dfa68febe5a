package dev.sluice.config;

import dev.sluice.annotation.RateLimited;
import dev.sluice.annotation.RateLimits;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * The methods {@code dev.sluice.aop.RateLimitedAspect} advises, matched with plain reflection, so
 * that proxies need no AspectJ weaver at run time. The aspect's pointcut is
 *
 * <pre class="code">
 * execution(&#64;RateLimited * *(..)) || execution(&#64;(&#64;RateLimited *) * *(..))
 *     || execution(public * (&#64;RateLimited *).*(..)) || execution(public * (&#64;(&#64;RateLimited *) *).*(..))
 * </pre>
 *
 * <p>with the same four terms for {@code @RateLimits}, and this pointcut matches as Spring AOP
 * evaluates it, on the method the target class runs (an override, never a bridge method):
 * <ul>
 * <li>a method of any visibility that declares {@code @RateLimited} or {@code @RateLimits}, or an
 *     annotation whose type declares one of them (one level of composition: method annotations
 *     are never inherited from an overridden method);</li>
 * <li>a public method whose class declares them so, or that overrides a method of a superclass
 *     or interface that declares them so (AspectJ matches the declaring type against every type
 *     that declares the method).</li>
 * </ul>
 */
final class RateLimitedMethodPointcut extends StaticMethodMatcherPointcut {

    private static final Set<Class<? extends Annotation>> LIMITS = Set.of(RateLimited.class, RateLimits.class);

    RateLimitedMethodPointcut() {
        setClassFilter(type -> AnnotationUtils.isCandidateClass(type, LIMITS));
    }

    @Override
    public boolean matches(Method method, Class<?> targetClass) {
        // A JDK proxy class redeclares its interfaces' methods without their annotations.
        Method running = Proxy.isProxyClass(targetClass) ? method : AopUtils.getMostSpecificMethod(method, targetClass);
        if (carriesLimit(running)) {
            return true;
        }
        return Modifier.isPublic(running.getModifiers()) && declaredByLimitedType(running);
    }

    /** Whether a type that declares the method carries a limit: its class or what it overrides. */
    private static boolean declaredByLimitedType(Method method) {
        Class<?> declaringClass = method.getDeclaringClass();
        if (carriesLimit(declaringClass)) {
            return true;
        }
        int modifiers = method.getModifiers();
        if (Modifier.isStatic(modifiers) || Modifier.isPrivate(modifiers)) {
            return false;
        }
        for (Class<?> supertype : supertypes(declaringClass)) {
            if (carriesLimit(supertype) && declaresOverridden(supertype, method)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code method} overrides or implements a method {@code supertype} declares. */
    private static boolean declaresOverridden(Class<?> supertype, Method method) {
        Class<?> declaringClass = method.getDeclaringClass();
        for (Method declared : supertype.getDeclaredMethods()) {
            if (declared.getName().equals(method.getName())
                    && declared.getParameterCount() == method.getParameterCount()
                    && !Modifier.isStatic(declared.getModifiers()) && !declared.isBridge() && !declared.isSynthetic()) {
                Method implementation = ClassUtils.getMostSpecificMethod(declared, declaringClass);
                if (BridgeMethodResolver.findBridgedMethod(implementation).equals(method)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Every superclass and interface of a type, however indirect. */
    private static Set<Class<?>> supertypes(Class<?> type) {
        Set<Class<?>> found = new HashSet<>();
        Deque<Class<?>> pending = new ArrayDeque<>();
        pending.add(type);
        while (!pending.isEmpty()) {
            Class<?> current = pending.poll();
            Class<?> superclass = current.getSuperclass();
            if (superclass != null && superclass != Object.class && found.add(superclass)) {
                pending.add(superclass);
            }
            for (Class<?> implemented : current.getInterfaces()) {
                if (found.add(implemented)) {
                    pending.add(implemented);
                }
            }
        }
        return found;
    }

    /**
     * Whether an element declares {@code @RateLimited} or {@code @RateLimits}, or an annotation
     * whose type declares one of them.
     */
    private static boolean carriesLimit(AnnotatedElement element) {
        for (Annotation annotation : element.getDeclaredAnnotations()) {
            Class<? extends Annotation> type = annotation.annotationType();
            if (LIMITS.contains(type) || type.isAnnotationPresent(RateLimited.class)
                    || type.isAnnotationPresent(RateLimits.class)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof RateLimitedMethodPointcut;
    }

    @Override
    public int hashCode() {
        return RateLimitedMethodPointcut.class.hashCode();
    }

    @Override
    public String toString() {
        return "RateLimitedMethodPointcut: methods of RateLimitedAspect";
    }
}
