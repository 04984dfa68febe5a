/**
 * Internals of the aspect shared with Sluice's other modules: not API. Nothing here is meant to
 * be called by applications, and any of it may change or go in any release without notice.
 */
@NullMarked
package dev.sluice.aop.internal;

import org.jspecify.annotations.NullMarked;
