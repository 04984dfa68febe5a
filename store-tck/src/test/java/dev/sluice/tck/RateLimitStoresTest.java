package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** Clearing any store for tests, though {@link RateLimitStore} has no such method. */
class RateLimitStoresTest {

    private static final List<Tier> ONE_PER_MINUTE = List.of(Tier.of(1, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW));

    private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder()
            .clock(new MutableClock(Instant.parse("2300-01-01T00:00:00Z"))).build();

    @Test
    void clearsTheStoreBeneathItsDecorators() {
        RateLimitStore decorated = new ForwardingRateLimitStore(new ForwardingRateLimitStore(memory) {
        }) {
        };
        decorated.tryAcquire("k", ONE_PER_MINUTE, 1);

        RateLimitStores.clear(decorated);

        assertThat(decorated.tryAcquire("k", ONE_PER_MINUTE, 1).allowed()).isTrue();
    }

    @Test
    void aStoreOfItsOwnIsClearedByItsPublicClear() {
        OwnStore own = new OwnStore();

        RateLimitStores.clear(own);

        assertThat(own.cleared).isTrue();
    }

    @Test
    void aStoreWithoutClearSaysSoByName() {
        assertThatThrownBy(() -> RateLimitStores.clear(new Unclearable()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessage(Unclearable.class.getName() + " cannot clear its keys: it has no public clear()");
    }

    /** A store of a test's own, in a class that is not public. */
    private static class OwnStore extends Unclearable {

        boolean cleared;

        public void clear() {
            cleared = true;
        }
    }

    /** A store without a clear(). */
    private static class Unclearable implements RateLimitStore {

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            throw new UnsupportedOperationException();
        }
    }
}
