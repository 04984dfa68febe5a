/**
 * Spring AOT and native-image hints for the starter: what the auto-configuration, the
 * {@code ratelimits} endpoint, configuration binding and the Redis store's scripts need at run time
 * that Spring cannot infer from the beans. Registered in {@code META-INF/spring/aot.factories}.
 */
@NullMarked
package dev.sluice.boot.aot;

import org.jspecify.annotations.NullMarked;
