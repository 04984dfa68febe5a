package dev.sluice;

import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Which exceptions of a store count as an outage, set as Resilience4j's {@code CircuitBreakerConfig}
 * sets which count as failures: {@code recordExceptions} and {@code recordException(Predicate)}
 * name the outages (by default every {@link Exception}), {@code ignoreExceptions} and
 * {@code ignoreException(Predicate)} the exceptions that are none, whatever the record side says
 * (by default programming errors: {@link #PROGRAMMING_ERRORS}). Given both, the lists and the
 * predicate of a side are either-or. A {@link StoreUnavailableException} is always an outage: it
 * is how stores and circuit breakers say they failed. A {@link StoreOverloadedException} never is,
 * whatever the lists and predicates say: an overloaded store refused a call without asking its
 * backend, a spike that a limiter answers as a rejection and a breaker counts for nothing.
 * Immutable.
 */
final class StoreFailureFilter {

    /** What a store throws when it, or the code calling it, has a bug: no outage. */
    static final List<Class<? extends Throwable>> PROGRAMMING_ERRORS = List.of(NullPointerException.class,
            IllegalArgumentException.class, IllegalStateException.class, UnsupportedOperationException.class,
            ClassCastException.class);

    /** Every exception but programming errors. */
    static final StoreFailureFilter DEFAULT = new StoreFailureFilter(List.of(), null, PROGRAMMING_ERRORS, null);

    private final List<Class<? extends Throwable>> recordExceptions;
    private final @Nullable Predicate<Throwable> recordException;
    private final List<Class<? extends Throwable>> ignoreExceptions;
    private final @Nullable Predicate<Throwable> ignoreException;

    private StoreFailureFilter(List<Class<? extends Throwable>> recordExceptions,
                               @Nullable Predicate<Throwable> recordException,
                               List<Class<? extends Throwable>> ignoreExceptions,
                               @Nullable Predicate<Throwable> ignoreException) {
        this.recordExceptions = recordExceptions;
        this.recordException = recordException;
        this.ignoreExceptions = ignoreExceptions;
        this.ignoreException = ignoreException;
    }

    @SafeVarargs
    final StoreFailureFilter recordExceptions(Class<? extends Throwable>... classes) {
        return new StoreFailureFilter(classes(classes), recordException, ignoreExceptions, ignoreException);
    }

    StoreFailureFilter recordException(Predicate<Throwable> predicate) {
        return new StoreFailureFilter(recordExceptions, Objects.requireNonNull(predicate, "predicate"),
                ignoreExceptions, ignoreException);
    }

    @SafeVarargs
    final StoreFailureFilter ignoreExceptions(Class<? extends Throwable>... classes) {
        return new StoreFailureFilter(recordExceptions, recordException, classes(classes), ignoreException);
    }

    StoreFailureFilter ignoreException(Predicate<Throwable> predicate) {
        return new StoreFailureFilter(recordExceptions, recordException, ignoreExceptions,
                Objects.requireNonNull(predicate, "predicate"));
    }

    /** Whether an exception is neither an outage nor an answer of the store. */
    boolean ignores(Throwable failure) {
        if (failure instanceof StoreOverloadedException) {
            return true;
        }
        return !(failure instanceof StoreUnavailableException)
                && (isAny(failure, ignoreExceptions) || ignoreException != null && ignoreException.test(failure));
    }

    /** Whether an exception is an outage of the store. */
    boolean isOutage(Throwable failure) {
        if (failure instanceof StoreUnavailableException) {
            return true;
        }
        if (ignores(failure)) {
            return false;
        }
        if (recordExceptions.isEmpty() && recordException == null) {
            return failure instanceof Exception;
        }
        return isAny(failure, recordExceptions) || recordException != null && recordException.test(failure);
    }

    private static boolean isAny(Throwable failure, List<Class<? extends Throwable>> classes) {
        for (Class<? extends Throwable> type : classes) {
            if (type.isInstance(failure)) {
                return true;
            }
        }
        return false;
    }

    @SafeVarargs
    private static List<Class<? extends Throwable>> classes(Class<? extends Throwable>... classes) {
        return List.of(Objects.requireNonNull(classes, "classes"));
    }
}
