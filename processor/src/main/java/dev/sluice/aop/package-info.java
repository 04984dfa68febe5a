/**
 * How {@code @RateLimited} methods are limited: {@link dev.sluice.aop.RateLimitedAspect}, which
 * AspectJ weaving applies, and {@link dev.sluice.aop.MethodRateLimiter}, the engine it delegates
 * to, which parses annotations into validated limiters and evaluates SpEL keys. Spring proxies
 * do not apply the aspect: {@code dev.sluice.config.RateLimitingAdvisor} limits the same methods
 * through the same engine, without AspectJ's weaver. {@link dev.sluice.aop.LimitOverrides} and
 * {@link dev.sluice.aop.RateLimitVariables} are the extension points the Spring Boot starter
 * plugs into.
 */
@NullMarked
package dev.sluice.aop;

import org.jspecify.annotations.NullMarked;
