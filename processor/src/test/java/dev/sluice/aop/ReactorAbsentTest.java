package dev.sluice.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.annotation.RateLimited;
import dev.sluice.aop.internal.SubscriberContext;
import io.reactivex.rxjava3.core.Single;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;

/**
 * Reactor is an optional dependency: without it the engine loads and limits every other
 * method, and a method returning a reactive type fails validation rather than being limited
 * when called instead of when subscribed.
 */
class ReactorAbsentTest {

    public static class Plain {
        @RateLimited(limit = 1, window = "1m")
        public String plain() {
            return "plain";
        }

        @RateLimited(limit = 1, window = "1m")
        public CompletionStage<String> later() {
            return CompletableFuture.completedFuture("later");
        }
    }

    public static class ReturnsAPublisher {
        @RateLimited(limit = 1, window = "1m")
        public Publisher<String> quotes() {
            throw new UnsupportedOperationException();
        }
    }

    public static class ReturnsASingle {
        @RateLimited(limit = 1, window = "1m")
        public Single<String> quote() {
            throw new UnsupportedOperationException();
        }
    }

    /** Loads the engine's package itself, and finds no Reactor. */
    static final class WithoutReactor extends ClassLoader {

        WithoutReactor() {
            super(ReactorAbsentTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("reactor.")) {
                throw new ClassNotFoundException(name + " is hidden");
            }
            if (!name.startsWith("dev.sluice.aop.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> loaded = findLoadedClass(name);
                if (loaded == null) {
                    try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        if (in == null) {
                            throw new ClassNotFoundException(name);
                        }
                        byte[] bytes = in.readAllBytes();
                        loaded = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return loaded;
            }
        }

        boolean loaded(String name) {
            return findLoadedClass(name) != null;
        }
    }

    private final WithoutReactor loader = new WithoutReactor();

    private Object engine() throws Exception {
        Class<?> type = loader.loadClass(MethodRateLimiter.class.getName());
        Object builder = type.getMethod("builder").invoke(null);
        return builder.getClass().getMethod("build").invoke(builder);
    }

    private static Object validate(Object engine, Class<?> type) throws Throwable {
        try {
            return engine.getClass().getMethod("validate", Class.class).invoke(engine, type);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private Object call(Object engine, Class<?> type, String methodName) throws Throwable {
        Object target = type.getConstructor().newInstance();
        Method method = type.getMethod(methodName);
        Class<?> invocationType = loader.loadClass(MethodRateLimiter.Invocation.class.getName());
        Object invocation = Proxy.newProxyInstance(loader, new Class<?>[] {invocationType},
                (proxy, called, args) -> switch (called.getName()) {
                    case "proceed" -> method.invoke(target);
                    case "copy" -> proxy;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> "invocation of " + methodName;
                });
        try {
            return engine.getClass().getMethod("invoke", Method.class, Object.class, Class.class, Object[].class,
                    invocationType).invoke(engine, method, target, type, new Object[0], invocation);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void theEngineLimitsOtherMethodsWithoutLoadingReactor() throws Throwable {
        Object engine = engine();
        Class<?> plain = loader.loadClass(Plain.class.getName());
        validate(engine, plain);

        assertThat(call(engine, plain, "plain")).isEqualTo("plain");
        assertThatThrownBy(() -> call(engine, plain, "plain")).isInstanceOf(RateLimitExceededException.class);
        assertThat(((CompletionStage<?>) call(engine, plain, "later")).toCompletableFuture().join()).isEqualTo("later");

        assertThat(engine.getClass().getClassLoader()).isSameAs(loader);
        assertThat(loader.loaded(ReactiveCalls.class.getName())).isFalse();
        assertThat(loader.loaded(SubscriberContext.class.getName())).isFalse();
    }

    @Test
    void aMethodReturningAPublisherFailsValidationSayingReactorIsNeeded() throws Throwable {
        Object engine = engine();
        Class<?> type = loader.loadClass(ReturnsAPublisher.class.getName());

        assertThatThrownBy(() -> validate(engine, type))
                .satisfies(e -> assertThat(e.getClass().getName()).isEqualTo(RateLimitConfigurationException.class.getName()))
                .hasMessage("Invalid @RateLimited on " + ReturnsAPublisher.class.getName() + ".quotes(): @RateLimited is"
                        + " on a method returning org.reactivestreams.Publisher, a reactive type whose calls are decided"
                        + " when subscribed, which needs Project Reactor: add io.projectreactor:reactor-core to the"
                        + " class path");
    }

    @Test
    void soDoesAnyTypeSpringsRegistryAdapts() throws Throwable {
        Object engine = engine();
        Class<?> type = loader.loadClass(ReturnsASingle.class.getName());

        assertThatThrownBy(() -> validate(engine, type))
                .hasMessageContaining(".quote(): @RateLimited is on a method returning io.reactivex.rxjava3.core.Single,"
                        + " a reactive type whose calls are decided when subscribed, which needs Project Reactor");
    }
}
