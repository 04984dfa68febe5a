package dev.sluice.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;

/**
 * Gives every test of a Spring Boot test class fresh rate-limit counts and a clock it moves.
 *
 * <p>The annotation adds to the test's application context a {@link dev.sluice.tck.MutableClock}
 * (the {@code @Primary} {@link java.time.InstantSource}, which the limiters and the in-memory
 * store read) and a {@link dev.sluice.Sleeper} that moves that clock instead of waiting, so that
 * limiters with {@code onLimit = WAIT} take no real time. Before each test method,
 * {@link SluiceTestExecutionListener} {@linkplain dev.sluice.tck.RateLimitStores#clear clears}
 * every {@link dev.sluice.RateLimitStore} bean of the context (with the store's own public
 * {@code clear()}) and sets the clock back to where it started, the start of the current day in
 * UTC, so that no test sees what another counted.
 *
 * <pre class="code">
 * &#64;SpringBootTest
 * &#64;AutoConfigureSluiceTest
 * class OtpTests {
 *
 *     &#64;Autowired MutableClock clock;
 *
 *     &#64;Test
 *     void aFourthCodeWithinAMinuteIsRefused() { ... }
 *
 *     &#64;Test
 *     void codesMayBeAskedForAgainAMinuteLater() {
 *         ...
 *         clock.advance(Duration.ofMinutes(1));
 *         ...
 *     }
 * }
 * </pre>
 *
 * <p>It is opt-in, not applied to every Spring test, because clearing a store deletes data: with
 * a Redis store, every key under the store's prefix. Point such tests at a Redis of their own.
 * With a Redis store, decisions follow the Redis server's clock, not the test clock (which then
 * moves only waits): tests that move time use the in-memory store. The local fallback store,
 * which decides only while the store fails, is not cleared.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Import(SluiceTestConfiguration.class)
public @interface AutoConfigureSluiceTest {
}
