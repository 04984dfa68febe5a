package dev.sluice.kotlin

import dev.sluice.annotation.RateLimited
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred

/** A Spring bean whose exports run at most one at a time per user. Open, as Spring proxies its class. */
open class Exporter {

    /** How many calls of [export] are running. */
    open val exporting = AtomicInteger()

    /** Exports for a user once [done] completes, at most one export per user running at once. */
    @RateLimited(key = "#user", concurrency = 1)
    open suspend fun export(user: String, done: CompletableDeferred<Unit>): String {
        exporting.incrementAndGet()
        try {
            done.await()
            return "exported $user"
        } finally {
            exporting.decrementAndGet()
        }
    }
}
