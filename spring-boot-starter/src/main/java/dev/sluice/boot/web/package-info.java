/**
 * What Sluice's Spring MVC and WebFlux support share: the client address behind {@code #ip}, the
 * limiters of {@code sluice.http.rules} and the restricted expressions of configured rules, the
 * rate-limit header fields and the RFC 9457 answers of a request, and the configuration both
 * stacks import. Each stack's auto-configuration, filter, header writer and exception handler sit
 * in {@code web.servlet} and {@code web.reactive}.
 */
@NullMarked
package dev.sluice.boot.web;

import org.jspecify.annotations.NullMarked;
