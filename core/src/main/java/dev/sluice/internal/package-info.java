/**
 * Sluice's own internals, shared between its modules: not API. Nothing here is meant to be
 * called by applications, and any of it may change or go in any release without notice.
 */
@NullMarked
package dev.sluice.internal;

import org.jspecify.annotations.NullMarked;
