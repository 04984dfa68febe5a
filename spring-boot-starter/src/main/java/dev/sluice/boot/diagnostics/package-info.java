/**
 * How Sluice reports what stops an application from starting: the failure analyzers of
 * configuration that cannot work and of {@code sluice.*} properties that bind to nothing, and the
 * check, run before any auto-configuration, that refuses a Spring Boot line the starter is not
 * built for, naming the starter to use. Registered in {@code META-INF/spring.factories}.
 */
@NullMarked
package dev.sluice.boot.diagnostics;

import org.jspecify.annotations.NullMarked;
