package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.RateLimitedAspect;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Objects;
import java.util.stream.Stream;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.aop.Pointcut;
import org.springframework.aop.aspectj.AspectJExpressionPointcut;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

/**
 * The advisor's pointcut matches the methods the aspect's {@code @Around} pointcut matches, as
 * Spring AOP evaluates that pointcut with AspectJ's weaver (which these tests have on their
 * class path, unlike an application of proxies).
 */
class RateLimitedMethodPointcutTest {

    private static final Pointcut POINTCUT = new RateLimitingAdvisor(new RateLimitingInterceptor(() -> {
        throw new AssertionError("never called");
    })).getPointcut();

    private static final AspectJExpressionPointcut ASPECT_POINTCUT = aspectPointcut();

    /** The pointcut of the aspect's around advice, resolved in the aspect, where its named pointcuts are. */
    private static AspectJExpressionPointcut aspectPointcut() {
        Around around = ClassUtils.getMethod(RateLimitedAspect.class, "limit", ProceedingJoinPoint.class)
                .getAnnotation(Around.class);
        AspectJExpressionPointcut pointcut = new AspectJExpressionPointcut(RateLimitedAspect.class, new String[0],
                new Class<?>[0]);
        pointcut.setExpression(Objects.requireNonNull(around).value());
        return pointcut;
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    @RateLimited(limit = 1, window = "1h")
    @interface OncePerHour {
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    @RateLimited(limit = 1, window = "1s")
    @RateLimited(limit = 10, window = "1h")
    @interface TwoTiers {
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    @OncePerHour
    @interface ComposedTwice {
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    @Inherited
    @RateLimited(limit = 1, window = "1h")
    @interface InheritedLimit {
    }

    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.METHOD, ElementType.TYPE})
    @interface Unrelated {
    }

    @SuppressWarnings("unused")
    static class LimitedMethods {
        @RateLimited(limit = 1, window = "1h")
        public void direct() {
        }

        @RateLimited(limit = 1, window = "1s")
        @RateLimited(limit = 10, window = "1h")
        public void repeated() {
        }

        @OncePerHour
        public void composed() {
        }

        @TwoTiers
        public void composedOfRepeated() {
        }

        @ComposedTwice
        public void composedTwice() {
        }

        @Unrelated
        public void unrelated() {
        }

        public void none() {
        }

        @RateLimited(limit = 1, window = "1h")
        protected void protectedDirect() {
        }

        @OncePerHour
        void packagePrivateComposed() {
        }

        @RateLimited(limit = 1, window = "1h")
        private void privateDirect() {
        }

        @RateLimited(limit = 1, window = "1h")
        public static void staticDirect() {
        }
    }

    @SuppressWarnings("unused")
    @RateLimited(limit = 1, window = "1h")
    static class LimitedClass {
        public void open() {
        }

        protected void shielded() {
        }

        void packagePrivate() {
        }

        private void hidden() {
        }

        public static void utility() {
        }

        @Override
        public String toString() {
            return "limited";
        }
    }

    @OncePerHour
    static class ComposedLimitedClass {
        public void open() {
        }

        protected void shielded() {
        }
    }

    @RateLimited(limit = 1, window = "1s")
    @RateLimited(limit = 10, window = "1h")
    static class RepeatedLimitedClass {
        public void open() {
        }
    }

    @TwoTiers
    static class ComposedOfRepeatedLimitedClass {
        public void open() {
        }
    }

    @ComposedTwice
    static class ComposedTwiceLimitedClass {
        public void open() {
        }
    }

    @Unrelated
    static class UnrelatedClass {
        public void open() {
        }
    }

    static class SubclassOfLimitedClass extends LimitedClass {
        public void own() {
        }
    }

    static class OverridingSubclassOfLimitedClass extends LimitedClass {
        @Override
        public void open() {
        }
    }

    static class MethodOwner {
        @RateLimited(limit = 1, window = "1h")
        public void limited() {
        }
    }

    static class OverriderOfLimitedMethod extends MethodOwner {
        @Override
        public void limited() {
        }
    }

    @RateLimited(limit = 1, window = "1h")
    interface LimitedInterface {
        void call();

        default void byDefault() {
        }
    }

    static class ImplementationOfLimitedInterface implements LimitedInterface {
        @Override
        public void call() {
        }

        public void own() {
        }
    }

    interface Api {
        void call();
    }

    static class LimitedImplementation implements Api {
        @Override
        @RateLimited(limit = 1, window = "1h")
        public void call() {
        }
    }

    @RateLimited(limit = 1, window = "1h")
    abstract static class GenericLimitedClass<T> {
        public abstract void take(T value);
    }

    static class GenericSubclass extends GenericLimitedClass<String> {
        @Override
        public void take(String value) {
        }
    }

    @InheritedLimit
    static class InheritedLimitBase {
        public void base() {
        }
    }

    static class InheritedLimitSubclass extends InheritedLimitBase {
        public void own() {
        }
    }

    /** The method of a class with that name and no parameters, or the only one with that name. */
    private static Method method(Class<?> type, String name) {
        Method[] candidates = Stream.concat(Arrays.stream(type.getDeclaredMethods()), Arrays.stream(type.getMethods()))
                .filter(method -> method.getName().equals(name) && !method.isBridge())
                .distinct()
                .toArray(Method[]::new);
        assertThat(candidates).as("%s.%s", type.getSimpleName(), name).hasSize(1);
        return candidates[0];
    }

    private static Arguments call(Class<?> targetClass, Class<?> declaring, String name, boolean limited) {
        Method method = method(declaring, name);
        return Arguments.of(targetClass.getSimpleName() + " " + declaring.getSimpleName() + "." + name, method,
                targetClass, limited);
    }

    static Stream<Arguments> calls() {
        return Stream.of(
                call(LimitedMethods.class, LimitedMethods.class, "direct", true),
                call(LimitedMethods.class, LimitedMethods.class, "repeated", true),
                call(LimitedMethods.class, LimitedMethods.class, "composed", true),
                call(LimitedMethods.class, LimitedMethods.class, "composedOfRepeated", true),
                call(LimitedMethods.class, LimitedMethods.class, "composedTwice", false),
                call(LimitedMethods.class, LimitedMethods.class, "unrelated", false),
                call(LimitedMethods.class, LimitedMethods.class, "none", false),
                call(LimitedMethods.class, LimitedMethods.class, "protectedDirect", true),
                call(LimitedMethods.class, LimitedMethods.class, "packagePrivateComposed", true),
                call(LimitedMethods.class, LimitedMethods.class, "privateDirect", true),
                call(LimitedMethods.class, LimitedMethods.class, "staticDirect", true),
                call(LimitedMethods.class, Object.class, "hashCode", false),

                call(LimitedClass.class, LimitedClass.class, "open", true),
                call(LimitedClass.class, LimitedClass.class, "shielded", false),
                call(LimitedClass.class, LimitedClass.class, "packagePrivate", false),
                call(LimitedClass.class, LimitedClass.class, "hidden", false),
                call(LimitedClass.class, LimitedClass.class, "utility", true),
                call(LimitedClass.class, Object.class, "toString", true),
                call(LimitedClass.class, Object.class, "hashCode", false),
                call(ComposedLimitedClass.class, ComposedLimitedClass.class, "open", true),
                call(ComposedLimitedClass.class, ComposedLimitedClass.class, "shielded", false),
                call(RepeatedLimitedClass.class, RepeatedLimitedClass.class, "open", true),
                call(ComposedOfRepeatedLimitedClass.class, ComposedOfRepeatedLimitedClass.class, "open", true),
                call(ComposedTwiceLimitedClass.class, ComposedTwiceLimitedClass.class, "open", false),
                call(UnrelatedClass.class, UnrelatedClass.class, "open", false),

                call(SubclassOfLimitedClass.class, LimitedClass.class, "open", true),
                call(SubclassOfLimitedClass.class, SubclassOfLimitedClass.class, "own", false),
                call(OverridingSubclassOfLimitedClass.class, LimitedClass.class, "open", true),
                call(OverridingSubclassOfLimitedClass.class, OverridingSubclassOfLimitedClass.class, "open", true),
                call(OverriderOfLimitedMethod.class, MethodOwner.class, "limited", false),
                call(ImplementationOfLimitedInterface.class, LimitedInterface.class, "call", true),
                call(ImplementationOfLimitedInterface.class, LimitedInterface.class, "byDefault", true),
                call(ImplementationOfLimitedInterface.class, ImplementationOfLimitedInterface.class, "own", false),
                call(LimitedImplementation.class, Api.class, "call", true),
                call(GenericSubclass.class, GenericSubclass.class, "take", true),
                call(GenericSubclass.class, GenericLimitedClass.class, "take", true),
                call(InheritedLimitSubclass.class, InheritedLimitBase.class, "base", true),
                call(InheritedLimitSubclass.class, InheritedLimitSubclass.class, "own", false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("calls")
    void matchesTheMethodsTheAspectMatches(String description, Method method, Class<?> targetClass,
                                           boolean limited) {
        assertThat(ASPECT_POINTCUT.matches(method, targetClass)).as("the aspect's pointcut").isEqualTo(limited);
        assertThat(POINTCUT.getClassFilter().matches(targetClass) && POINTCUT.getMethodMatcher()
                .matches(method, targetClass)).as("the advisor's pointcut").isEqualTo(limited);
    }

    static Stream<Class<?>> targetClasses() {
        return Stream.of(LimitedMethods.class, LimitedClass.class, ComposedLimitedClass.class,
                RepeatedLimitedClass.class, ComposedOfRepeatedLimitedClass.class, ComposedTwiceLimitedClass.class,
                UnrelatedClass.class, SubclassOfLimitedClass.class, OverridingSubclassOfLimitedClass.class,
                MethodOwner.class, OverriderOfLimitedMethod.class, ImplementationOfLimitedInterface.class,
                LimitedImplementation.class, GenericSubclass.class, InheritedLimitBase.class,
                InheritedLimitSubclass.class, Object.class, String.class);
    }

    @ParameterizedTest
    @MethodSource("targetClasses")
    void proxiesTheClassesTheAspectProxies(Class<?> targetClass) {
        assertThat(AopUtils.canApply(POINTCUT, targetClass))
                .isEqualTo(AopUtils.canApply(ASPECT_POINTCUT, targetClass));
    }
}
