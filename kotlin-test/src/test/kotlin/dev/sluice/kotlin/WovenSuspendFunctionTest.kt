package dev.sluice.kotlin

import dev.sluice.aop.RateLimitConfigurationException
import dev.sluice.aop.RateLimitedAspect
import dev.sluice.config.EnableRateLimiting
import java.lang.reflect.Proxy
import kotlin.coroutines.Continuation
import org.aspectj.lang.ProceedingJoinPoint
import org.aspectj.lang.reflect.MethodSignature
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import org.springframework.context.annotation.AdviceMode
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/**
 * Woven code sees a suspend function as a method taking a continuation, returning as soon as it
 * suspends: it cannot limit it without blocking, so it refuses, naming the function.
 */
class WovenSuspendFunctionTest {

    private val message = "Invalid @RateLimited on dev.sluice.kotlin.Greeter.greet(String, Continuation): @RateLimited" +
        " is on a Kotlin suspend function, which code woven by AspectJ cannot limit without blocking its caller: limit" +
        " it through Spring proxies (@EnableRateLimiting in its default PROXY mode), which decide each call when the" +
        " function is awaited"

    @Configuration(proxyBeanMethods = false)
    @EnableRateLimiting(mode = AdviceMode.ASPECTJ)
    class WovenApp {
        @Bean
        fun greeter() = Greeter()
    }

    @Test
    fun `ASPECTJ mode fails start-up for a limited suspend function`() {
        assertThatThrownBy { AnnotationConfigApplicationContext(WovenApp::class.java).close() }
            .isInstanceOf(RateLimitConfigurationException::class.java)
            .hasMessage(message)
    }

    @Test
    fun `a woven call of a suspend function fails without running it`() {
        val greeter = Greeter()
        val greet = Greeter::class.java.getMethod("greet", String::class.java, Continuation::class.java)
        val signature = proxy<MethodSignature> { name -> if (name == "getMethod") greet else null }
        val joinPoint = proxy<ProceedingJoinPoint> { name ->
            when (name) {
                "getSignature" -> signature
                "getTarget" -> greeter
                "getArgs" -> arrayOf<Any?>("ann", null)
                else -> throw AssertionError("the join point must not be asked for $name")
            }
        }

        assertThatThrownBy { RateLimitedAspect().limit(joinPoint) }
            .isInstanceOf(RateLimitConfigurationException::class.java)
            .hasMessage(message)
        assertThat(greeter.greetings).hasValue(0)
    }

    private inline fun <reified T> proxy(crossinline answer: (String) -> Any?): T =
        Proxy.newProxyInstance(T::class.java.classLoader, arrayOf(T::class.java)) { _, method, _ ->
            answer(method.name)
        } as T
}
