package dev.sluice.sample;

/** The sample application as it starts by default, counting in memory. */
class SampleAppTest extends SampleAppContract {

    @Override
    String storeName() {
        return "InMemoryRateLimitStore";
    }

    @Override
    String storeState() {
        return "null";
    }
}
