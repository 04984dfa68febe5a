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
 * (the {@code @Primary} {@link java.time.InstantSource}, which the limiters read) and a
 * {@link dev.sluice.Sleeper} that moves that clock instead of waiting, so that limiters with
 * {@code onLimit = WAIT} take no real time. By default ({@link Store#IN_MEMORY}) the limiters
 * decide in an in-memory store on that clock, whatever store the application configures, so a
 * test never touches the application's Redis. Before each test method,
 * {@link SluiceTestExecutionListener} {@linkplain dev.sluice.tck.RateLimitStores#clear clears}
 * the store and sets the clock back to where it started, the start of the current day in UTC,
 * so that no test sees what another counted.
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
 * <p>It is opt-in, not applied to every Spring test, because it replaces the store and clears
 * it. With {@link Store#CONFIGURED} the test keeps the application's store: with
 * {@code sluice.store=redis}, the Redis store then writes under a key prefix of the test's own
 * (the configured one followed by {@code -test-} and a random suffix), and only those keys are
 * cleared. Redis decides by its server's clock, which a test cannot move: moving the test clock
 * beside such a store fails, naming the fix. The local fallback store, which decides only while
 * the store fails, is not cleared.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Import(SluiceTestImports.class)
public @interface AutoConfigureSluiceTest {

    /**
     * Which store the limiters decide in.
     *
     * @return {@link Store#IN_MEMORY} unless the test needs the application's own store
     */
    Store store() default Store.IN_MEMORY;

    /** Which store a test's limiters decide in. */
    enum Store {

        /** An in-memory store on the test clock, in place of the store the application configures. */
        IN_MEMORY,

        /**
         * The store the application configures; a Redis store configured by
         * {@code sluice.redis.*} writes under a key prefix of the test's own.
         */
        CONFIGURED
    }
}
