/**
 * Sluice in Spring WebFlux applications: the auto-configuration, the web filter deciding the
 * requests {@code sluice.http.rules} match without blocking, rate-limit headers written as the
 * response commits, the exception handler answering rejected calls with 429, 503 and 400, and the
 * start-up check of limited methods that are not reactive.
 */
@NullMarked
package dev.sluice.boot.web.reactive;

import org.jspecify.annotations.NullMarked;
