/**
 * Sluice in Spring MVC applications: the auto-configuration, the filter deciding the requests
 * {@code sluice.http.rules} match, rate-limit headers on servlet responses, and the exception
 * handler answering rejected calls with 429, 503 and 400.
 */
@NullMarked
package dev.sluice.boot.web.servlet;

import org.jspecify.annotations.NullMarked;
