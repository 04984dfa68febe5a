package dev.sluice.tck;

import dev.sluice.annotation.Algorithm;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Runs a {@code @ParameterizedTest} once for each rate algorithm: every {@link Algorithm} but
 * {@link Algorithm#CONCURRENCY}, which counts calls running rather than calls made, and has tests
 * of its own.
 */
@Documented
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@EnumSource(value = Algorithm.class, mode = EnumSource.Mode.EXCLUDE, names = "CONCURRENCY")
public @interface RateAlgorithms {
}
