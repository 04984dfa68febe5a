package dev.sluice.aop;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A rate limit is declared in a way that cannot work: a bad {@code @RateLimited} attribute, or
 * configuration that contradicts it. Under Spring it fails the application context at start-up.
 * The message names the class, the method, the attribute and what is wrong.
 */
public class RateLimitConfigurationException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a finished message.
     *
     * @param message what is wrong and where
     * @param cause   the underlying failure, or {@code null}
     */
    public RateLimitConfigurationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /**
     * An attribute of the limits on {@code method} is wrong.
     *
     * @param method    the annotated method
     * @param attribute the attribute, as named on {@code @RateLimited}
     * @param problem   what is wrong with it, and how to fix it
     * @return the exception
     */
    public static RateLimitConfigurationException invalid(Method method, String attribute, String problem) {
        return invalid(method, attribute, problem, null);
    }

    static RateLimitConfigurationException invalid(Method method, String attribute, String problem,
                                                   @Nullable Throwable cause) {
        return new RateLimitConfigurationException(
                "Invalid @RateLimited on " + describe(method) + ": " + attribute + " " + problem, cause);
    }

    /**
     * How messages name a method: {@code com.example.OtpController.sendOtp(OtpRequest)}.
     *
     * @param method the method
     * @return its class, name and simple parameter type names
     */
    public static String describe(Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName()
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                        .collect(Collectors.joining(", ", "(", ")"));
    }
}
