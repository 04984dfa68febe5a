package dev.sluice.boot.actuate;

import dev.sluice.RateLimitStore;
import dev.sluice.StoreCircuitBreaker;
import dev.sluice.StoreQueue;
import dev.sluice.annotation.FailurePolicy;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code sluice} health component: the state of the store's circuit breaker and, for a store
 * whose decisions wait in a queue (the Redis store), the queue: {@code queued}, the decisions
 * waiting now; {@code capacity}, the most that may wait; and {@code overloaded}, how many got the
 * store's overload policy so far. A full queue is a spike, not an outage, and leaves the status
 * as it is. {@code UP} while the store answers; {@code CIRCUIT_OPEN} while it fails and the
 * limiters follow their failure policy; {@code CIRCUIT_HALF_OPEN} while one call probes it. The last two are
 * statuses of their own, which leave the application's overall health {@code UP}: a limiter
 * whose store is down still serves by its failure policy, and must not take the instance out of
 * its load balancer. An application whose limits fail closed may rank them below {@code DOWN}
 * and map them to 503: {@code management.endpoint.health.status.order=DOWN,OUT_OF_SERVICE,CIRCUIT_OPEN,UP,UNKNOWN}
 * and {@code management.endpoint.health.status.http-mapping.circuit-open=503}.
 */
public class RateLimitStoreHealthIndicator implements HealthLine.HealthIndicator {

    /** The status while the store fails. */
    public static final String CIRCUIT_OPEN = "CIRCUIT_OPEN";

    /** The status while one call probes a failing store. */
    public static final String CIRCUIT_HALF_OPEN = "CIRCUIT_HALF_OPEN";

    private final RateLimitStore store;
    private final FailurePolicy defaultFailurePolicy;

    RateLimitStoreHealthIndicator(RateLimitStore store, FailurePolicy defaultFailurePolicy) {
        this.store = store;
        this.defaultFailurePolicy = defaultFailurePolicy;
    }

    @Override
    public HealthReport report() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("store", StoreName.of(store));
        details.put("defaultFailurePolicy", defaultFailurePolicy);
        store.queue().ifPresent(queue -> details.put("queue", queueDetails(queue)));
        StoreCircuitBreaker breaker = store.circuitBreaker().orElse(null);
        StoreCircuitBreaker.State state = breaker == null ? StoreCircuitBreaker.State.CLOSED : breaker.state();
        if (breaker != null) {
            details.put("circuitBreaker", state);
        }
        if (state == StoreCircuitBreaker.State.OPEN) {
            details.put("retryAfter", breaker.retryAfter());
            return new HealthReport(CIRCUIT_OPEN, "The rate limit store fails: limiters follow their failure policy",
                    details);
        }
        if (state == StoreCircuitBreaker.State.HALF_OPEN) {
            return new HealthReport(CIRCUIT_HALF_OPEN, "One call probes the failing rate limit store", details);
        }
        return new HealthReport("UP", "", details);
    }

    /** A queue's figures: {@code queued}, {@code capacity} and {@code overloaded}, in that order. */
    private static Map<String, Object> queueDetails(StoreQueue queue) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("queued", queue.queued());
        details.put("capacity", queue.capacity());
        details.put("overloaded", queue.overloaded());
        return details;
    }
}
