package dev.sluice.kotlin

import dev.sluice.RateLimitExceededException
import dev.sluice.Sleeper
import dev.sluice.annotation.OnLimit
import dev.sluice.annotation.RateLimited
import dev.sluice.aop.RateLimitConfigurationException
import dev.sluice.config.EnableRateLimiting
import dev.sluice.tck.MutableClock
import java.time.Duration
import java.time.Instant
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import org.springframework.aop.support.AopUtils
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/** Kotlin suspend functions and Flows limited through Spring proxies, per call and per collection. */
class SuspendFunctionLimitsTest {

    @Configuration(proxyBeanMethods = false)
    @EnableRateLimiting
    class App {
        @Bean
        fun greeter() = Greeter()

        @Bean
        fun concierge() = Concierge()

        @Bean
        fun exporter() = Exporter()

        @Bean
        fun clock() = MutableClock(Instant.parse("2500-01-01T00:00:00Z"))
    }

    private fun withGreeter(test: suspend (Greeter) -> Unit) {
        AnnotationConfigApplicationContext(App::class.java).use { context ->
            val greeter = context.getBean(Greeter::class.java)
            assertThat(AopUtils.isCglibProxy(greeter)).isTrue()
            runBlocking { test(greeter) }
        }
    }

    @Test
    fun `each call is limited, per user`() = withGreeter { greeter ->
        assertThat(greeter.greet("ann")).isEqualTo("hello ann")
        assertThat(greeter.greet("ann")).isEqualTo("hello ann")

        val rejected = runCatching { greeter.greet("ann") }.exceptionOrNull()

        assertThat(rejected).isInstanceOf(RateLimitExceededException::class.java)
        assertThat(greeter.greet("bob")).isEqualTo("hello bob")
    }

    @Test
    fun `a suspend function holds its permit while it runs, and gives it back when it returns or is cancelled`() {
        AnnotationConfigApplicationContext(App::class.java).use { context ->
            val exporter = context.getBean(Exporter::class.java)
            runBlocking {
                val done = CompletableDeferred<Unit>()
                val running = launch(Dispatchers.Default) { exporter.export("ann", done) }
                withTimeout(10_000) {
                    while (exporter.exporting.get() == 0) {
                        delay(1)
                    }
                }

                val rejected = runCatching { exporter.export("ann", CompletableDeferred(Unit)) }.exceptionOrNull()
                assertThat(rejected).isInstanceOfSatisfying(RateLimitExceededException::class.java) {
                    assertThat(it.decision().concurrency()).isTrue()
                }
                done.complete(Unit)
                running.join()
                assertThat(exporter.export("ann", CompletableDeferred(Unit))).isEqualTo("exported ann")

                val cancelled = launch(Dispatchers.Default) { exporter.export("bob", CompletableDeferred()) }
                withTimeout(10_000) {
                    while (exporter.exporting.get() == 0) {
                        delay(1)
                    }
                }
                cancelled.cancelAndJoin()
                assertThat(exporter.export("bob", CompletableDeferred(Unit))).`as`("after the cancelled call")
                    .isEqualTo("exported bob")
            }
        }
    }

    @Test
    fun `the key expression names the parameter`() = withGreeter { greeter ->
        greeter.greet("ann")
        greeter.greet("ann")

        val rejected = runCatching { greeter.greet("ann") }.exceptionOrNull()

        assertThat(rejected).isInstanceOfSatisfying(RateLimitExceededException::class.java) {
            assertThat(it.key()).isEqualTo("ann")
            assertThat(it.limiterName()).isEqualTo("Greeter.greet")
        }
    }

    @Test
    fun `the body does not run for a rejected call`() = withGreeter { greeter ->
        repeat(5) { runCatching { greeter.greet("ann") } }

        assertThat(greeter.greetings).hasValue(2)
    }

    @Test
    fun `a Flow is limited per collection, not when it is made`() = withGreeter { greeter ->
        val first = greeter.countdown("ann")
        val second = greeter.countdown("ann")

        assertThat(second.toList()).containsExactly(3, 2, 1)
        val rejected = runCatching { first.toList() }.exceptionOrNull()

        assertThat(rejected).isInstanceOf(RateLimitExceededException::class.java)
        assertThat(greeter.countdown("bob").toList()).containsExactly(3, 2, 1)
    }

    /** Suspend functions with a fallback, and counted by their result. */
    open class Concierge {
        @RateLimited(key = "#user", limit = 1, window = "1m", fallbackMethod = "later")
        open suspend fun welcome(user: String): String {
            yield()
            return "welcome $user"
        }

        open suspend fun later(user: String, limited: RateLimitExceededException): String {
            yield()
            return "later, $user (${limited.limiterName()})"
        }

        @RateLimited(key = "#user", limit = 1, window = "1m", unless = "#result == null")
        open suspend fun find(user: String, exists: Boolean): String? {
            yield()
            return if (exists) "found $user" else null
        }
    }

    private fun withConcierge(test: suspend (Concierge) -> Unit) {
        AnnotationConfigApplicationContext(App::class.java).use { context ->
            runBlocking { test(context.getBean(Concierge::class.java)) }
        }
    }

    @Test
    fun `a rejected call returns what its suspending fallback returns`() = withConcierge { concierge ->
        assertThat(concierge.welcome("ann")).isEqualTo("welcome ann")
        assertThat(concierge.welcome("ann")).isEqualTo("later, ann (Concierge.welcome)")
    }

    @Test
    fun `unless reads what a suspend function returned`() = withConcierge { concierge ->
        repeat(3) { assertThat(concierge.find("ann", false)).isNull() }
        assertThat(concierge.find("ann", true)).isEqualTo("found ann")

        val rejected = runCatching { concierge.find("ann", true) }.exceptionOrNull()

        assertThat(rejected).isInstanceOf(RateLimitExceededException::class.java)
    }

    /** A suspend function whose callers wait for their permits, one a minute. */
    open class Queue {
        @RateLimited(key = "#user", limit = 1, window = "1m", onLimit = OnLimit.WAIT, maxWait = "10m")
        open suspend fun enter(user: String): String {
            yield()
            return "in, $user"
        }
    }

    /** Waits that end only when the test says, or when their waiter gives up. */
    class HeldSleeper : Sleeper {
        val held = CopyOnWriteArrayList<CompletableFuture<Void>>()

        override fun sleep(duration: Duration) = throw AssertionError("a suspend function blocked a thread")

        override fun sleepAsync(duration: Duration): CompletionStage<Void> =
            CompletableFuture<Void>().also { held.add(it) }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableRateLimiting
    class QueueApp {
        @Bean
        fun queue() = Queue()

        @Bean
        fun clock() = MutableClock(Instant.parse("2500-01-01T00:00:00Z"))

        @Bean
        fun sleeper() = HeldSleeper()
    }

    @Test
    fun `a cancelled coroutine leaves the line at once and the next caller takes its place`() {
        AnnotationConfigApplicationContext(QueueApp::class.java).use { context ->
            val queue = context.getBean(Queue::class.java)
            val sleeper = context.getBean(HeldSleeper::class.java)
            val clock = context.getBean(MutableClock::class.java)
            runBlocking {
                assertThat(queue.enter("ann")).isEqualTo("in, ann")
                val waiting = launch(Dispatchers.Default) { queue.enter("ann") }
                withTimeout(10_000) {
                    while (sleeper.held.isEmpty()) {
                        delay(10)
                    }
                }

                waiting.cancelAndJoin()

                // Past the window after the first call's: the sliding window counter still weighs it a minute on.
                clock.advance(Duration.ofMinutes(2))
                val next = withTimeout(10_000) { queue.enter("ann") }
                assertThat(next).isEqualTo("in, ann")
                assertThat(sleeper.held).`as`("waits, the cancelled caller's only").hasSize(1)
            }
        }
    }

    open class Misnamed {
        @RateLimited(key = "#p1", limit = 1, window = "1m")
        open suspend fun greet(user: String): String = "hello $user"
    }

    @Configuration(proxyBeanMethods = false)
    @EnableRateLimiting
    class MisnamedApp {
        @Bean
        fun misnamed() = Misnamed()
    }

    @Test
    fun `the continuation is no parameter expressions can name`() {
        assertThatThrownBy { AnnotationConfigApplicationContext(MisnamedApp::class.java).close() }
            .isInstanceOf(RateLimitConfigurationException::class.java)
            .hasMessage(
                "Invalid @RateLimited on ${Misnamed::class.java.name}.greet(String, Continuation): key '#p1' refers" +
                    " to #p1, which is not a parameter of the method nor a known variable (known: #user, #p0, #a0," +
                    " #root, #this)"
            )
    }
}
