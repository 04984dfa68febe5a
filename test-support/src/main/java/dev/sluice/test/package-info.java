/**
 * Support for applications' own tests: {@link dev.sluice.test.AutoConfigureSluiceTest} gives
 * every test fresh rate-limit counts and a clock it moves.
 */
@NullMarked
package dev.sluice.test;

import org.jspecify.annotations.NullMarked;
