package dev.sluice.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Container for repeated {@link RateLimited} annotations; the compiler writes it for you when
 * {@code @RateLimited} is repeated. Each contained annotation is one tier.
 *
 * @see RateLimited
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE})
public @interface RateLimits {

    /**
     * The tiers.
     *
     * @return the repeated annotations, in declaration order
     */
    RateLimited[] value();
}
