/**
 * How {@code @RateLimited} methods are limited: {@link dev.sluice.aop.RateLimitedAspect}, which
 * Spring AOP and AspectJ weaving both apply, and {@link dev.sluice.aop.MethodRateLimiter}, the
 * engine it delegates to, which parses annotations into validated limiters and evaluates SpEL
 * keys. {@link dev.sluice.aop.LimitOverrides} and {@link dev.sluice.aop.RateLimitVariables} are
 * the extension points the Spring Boot starter plugs into.
 */
@NullMarked
package dev.sluice.aop;

import org.jspecify.annotations.NullMarked;
