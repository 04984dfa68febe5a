package dev.sluice.boot;

/** The web contract with the default in-memory store. */
class InMemoryHttpLimitsTest extends HttpLimitsContract {

    @Override
    String storeName() {
        return "InMemoryRateLimitStore";
    }

    @Override
    String storeState() {
        return "null";
    }
}
