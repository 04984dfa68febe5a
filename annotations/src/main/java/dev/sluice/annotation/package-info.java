/**
 * The annotations that declare rate limits: {@link dev.sluice.annotation.RateLimited} and the
 * enums it uses. This package has no dependencies, so domain and API modules can carry limits
 * without pulling in the engine.
 */
package dev.sluice.annotation;
