package dev.sluice.kotlin

import dev.sluice.annotation.RateLimited
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.yield

/**
 * A Spring bean limited per user. Open, as Spring proxies its class: a limit on a final
 * function fails start-up.
 */
open class Greeter {

    /** How often the body of [greet] ran. */
    open val greetings = AtomicInteger()

    /** Greets a user, at most twice a minute per user; each call is decided when it is made. */
    @RateLimited(key = "#user", limit = 2, window = "1m")
    open suspend fun greet(user: String): String {
        yield()
        greetings.incrementAndGet()
        return "hello $user"
    }

    /** Counts down for a user, once a minute per user; each collection is decided when it starts. */
    @RateLimited(key = "#user", limit = 1, window = "1m")
    open fun countdown(user: String): Flow<Int> = flow {
        for (i in 3 downTo 1) {
            emit(i)
        }
    }
}
