package dev.sluice;

import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.annotation.OnLimit;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** Decorators keep every capability of the store they wrap, and the in-memory fast path where they allow it. */
class ForwardingRateLimitStoreTest {

    private static final Tier TEN_PER_MINUTE = Tier.of(10, ofMinutes(1), TOKEN_BUCKET);

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();

    @Test
    void everyMethodOfTheStoreInterfaceIsForwarded() {
        List<String> notForwarded = Arrays.stream(RateLimitStore.class.getMethods())
                .filter(method -> !Modifier.isStatic(method.getModifiers()))
                .filter(method -> !declaredByForwardingStore(method))
                .map(Method::toGenericString)
                .toList();

        assertThat(notForwarded).as("methods of RateLimitStore that ForwardingRateLimitStore does not forward")
                .isEmpty();
    }

    private static boolean declaredByForwardingStore(Method method) {
        try {
            ForwardingRateLimitStore.class.getDeclaredMethod(method.getName(), method.getParameterTypes());
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    @Test
    void aDecoratedStoreStillReserves() {
        RateLimitStore decorated = new ForwardingRateLimitStore(memory) {
        };
        for (int i = 0; i < 10; i++) {
            decorated.tryAcquire("k", List.of(TEN_PER_MINUTE), 1);
        }

        assertThat(decorated.reserves(TEN_PER_MINUTE)).isTrue();
        Reservation reserved = decorated.reserve("k", List.of(TEN_PER_MINUTE), 1, ofMinutes(1));
        assertThat(reserved.decision().allowed()).as("reserved").isTrue();
        assertThat(reserved.delay()).isEqualTo(ofSeconds(6));
        assertThat(decorated.supportedAlgorithms()).isEqualTo(memory.supportedAlgorithms());
    }

    @Test
    void theStoreBeneathDecoratorsIsTheOneTheInnermostForwardsTo() {
        RateLimitStore inner = new ForwardingRateLimitStore(memory) {
        };
        RateLimitStore outer = new ForwardingRateLimitStore(inner) {
        };

        assertThat(ForwardingRateLimitStore.beneath(outer)).isSameAs(memory);
        assertThat(ForwardingRateLimitStore.beneath(memory)).isSameAs(memory);
    }

    @Test
    void limitersDecideWithTheInMemoryStoreBeneathAnObservingDecoratorWithoutCallingIt() {
        Observing observing = new Observing(memory);
        RateLimiter limiter = RateLimiter.builder().name("fast").store(observing).clock(clock)
                .tier(TEN_PER_MINUTE).onLimit(OnLimit.WAIT).maxWait(ofMinutes(1)).sleeper(duration -> millis.addAndGet(duration.toMillis())).build();

        for (int i = 0; i < 11; i++) {
            limiter.acquire("k");
        }
        assertThat(limiter.tryAcquire("k").allowed()).isFalse();

        assertThat(observing.deciding).as("decisions observed").hasValue(12);
        assertThat(observing.decided).as("decisions observed made").hasValue(12);
        assertThat(millis.get()).as("the eleventh permit was reserved and waited for once")
                .isEqualTo(Instant.parse("2300-01-01T00:00:06Z").toEpochMilli());
    }

    @Test
    void everyObservingDecoratorIsToldInTurn() {
        Observing inner = new Observing(memory);
        Observing outer = new Observing(inner);
        RateLimiter limiter = RateLimiter.builder().name("stacked").store(outer).clock(clock)
                .tier(Tier.of(1, ofMinutes(1), SLIDING_WINDOW)).build();

        limiter.tryAcquire("k");
        limiter.tryAcquire("k");

        assertThat(List.of(outer.deciding, outer.decided, inner.deciding, inner.decided))
                .allSatisfy(count -> assertThat(count).hasValue(2));
    }

    @Test
    void limitersCallADecoratorThatDoesNotObserve() {
        AtomicInteger calls = new AtomicInteger();
        RateLimitStore counting = new ForwardingRateLimitStore(memory) {
            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                calls.incrementAndGet();
                return super.tryAcquire(key, tiers, cost);
            }
        };
        RateLimiter limiter = RateLimiter.builder().name("counted").store(counting).clock(clock)
                .tier(Tier.of(1, ofMinutes(1), SLIDING_WINDOW)).build();

        limiter.tryAcquire("k");

        assertThat(calls).hasValue(1);
    }

    /** Lets limiters decide beneath it, counting what it is told, and fails any call that reaches it. */
    private static final class Observing extends ForwardingRateLimitStore {

        final AtomicInteger deciding = new AtomicInteger();
        final AtomicInteger decided = new AtomicInteger();

        Observing(RateLimitStore store) {
            super(store);
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            throw new AssertionError("the limiter called the decorator");
        }

        @Override
        public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
            throw new AssertionError("the limiter called the decorator");
        }

        @Override
        protected DecisionObserver decisionObserver() {
            return new DecisionObserver() {
                @Override
                public Object deciding() {
                    return deciding.incrementAndGet();
                }

                @Override
                public void decided(@Nullable Object token) {
                    assertThat(token).isEqualTo(deciding.get());
                    decided.incrementAndGet();
                }
            };
        }
    }
}
