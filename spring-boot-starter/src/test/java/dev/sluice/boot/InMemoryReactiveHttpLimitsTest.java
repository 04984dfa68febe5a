package dev.sluice.boot;

/** The WebFlux contract with the default in-memory store. */
class InMemoryReactiveHttpLimitsTest extends ReactiveHttpLimitsContract {

    @Override
    String storeName() {
        return "InMemoryRateLimitStore";
    }

    @Override
    String storeState() {
        return "null";
    }
}
