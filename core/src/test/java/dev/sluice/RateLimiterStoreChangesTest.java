package dev.sluice;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.FailurePolicy;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a limiter does when it changes what its store holds for a key outside a decision (gives
 * back, pauses, recounts): a store that cannot be reached never fails the caller, and the failure
 * policy says where the change is made; a store that cannot make the change says so.
 */
class RateLimiterStoreChangesTest {

    private static final List<String> KEYS = List.of("203.0.113.9", "203.0.113.10");

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:10Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
    private final List<RuntimeException> failures = new ArrayList<>();
    /** When the calls {@link Change#prepare} made were admitted. */
    private Instant admittedAt;

    /**
     * One kind of change, and a scenario that shows whether it was made: the calls it needs first,
     * how long before and after it the clock moves, and what a call then finds.
     */
    enum Change {
        GIVE_BACK(Tier.of(3, ofMinutes(1), FIXED_WINDOW), "cannot give permits back", ofSeconds(5), Duration.ZERO) {
            @Override
            void prepare(RateLimiterStoreChangesTest test, RateLimiter limiter, String key) {
                test.admitThree(limiter, key);
            }

            @Override
            CompletionStage<Void> make(RateLimiterStoreChangesTest test, RateLimiter limiter, String key,
                                       boolean async) {
                if (async) {
                    return limiter.giveBackAsync(key, 1, null, test.admittedAt);
                }
                limiter.giveBack(key, 1, null, test.admittedAt);
                return null;
            }

            @Override
            boolean shows(RateLimiter limiter, String key) {
                return limiter.tryAcquire(key).allowed();
            }

            @Override
            boolean can(RateLimiter limiter) {
                return limiter.givesBack();
            }

            @Override
            void makeMalformed(RateLimiter limiter, Instant now) {
                limiter.giveBack(KEYS.get(0), 4, null, now);
            }
        },
        PAUSE(Tier.of(3, ofMinutes(1), FIXED_WINDOW), "cannot pause a key", Duration.ZERO, Duration.ZERO) {
            @Override
            CompletionStage<Void> make(RateLimiterStoreChangesTest test, RateLimiter limiter, String key,
                                       boolean async) {
                if (async) {
                    return limiter.pauseAsync(key, null, ofMinutes(10));
                }
                limiter.pause(key, null, ofMinutes(10));
                return null;
            }

            @Override
            boolean shows(RateLimiter limiter, String key) {
                return !limiter.tryAcquire(key).allowed();
            }

            @Override
            boolean can(RateLimiter limiter) {
                return limiter.pauses();
            }

            @Override
            void makeMalformed(RateLimiter limiter, Instant now) {
                limiter.pause(KEYS.get(0), null, Duration.ofMillis((1L << 52) + 1));
            }
        },
        /** Three calls at once, one of them recounted half a window later: it counts when the others left. */
        RECOUNT(Tier.of(3, ofMinutes(1), SLIDING_LOG), "cannot recount a call", ofSeconds(30), ofSeconds(30)) {
            @Override
            void prepare(RateLimiterStoreChangesTest test, RateLimiter limiter, String key) {
                test.admitThree(limiter, key);
            }

            @Override
            CompletionStage<Void> make(RateLimiterStoreChangesTest test, RateLimiter limiter, String key,
                                       boolean async) {
                if (async) {
                    return limiter.recountAsync(key, 1, null, test.admittedAt);
                }
                limiter.recount(key, 1, null, test.admittedAt);
                return null;
            }

            @Override
            boolean shows(RateLimiter limiter, String key) {
                return !limiter.tryAcquire(key, 3).allowed();
            }

            @Override
            boolean can(RateLimiter limiter) {
                return limiter.recounts();
            }

            @Override
            void makeMalformed(RateLimiter limiter, Instant now) {
                limiter.recount(KEYS.get(0), 4, null, now);
            }
        };

        final Tier tier;
        final String refusal;
        final Duration before;
        final Duration after;

        Change(Tier tier, String refusal, Duration before, Duration after) {
            this.tier = tier;
            this.refusal = refusal;
            this.before = before;
            this.after = after;
        }

        /** Makes the calls the change needs. */
        void prepare(RateLimiterStoreChangesTest test, RateLimiter limiter, String key) {
        }

        /** Makes the change; asynchronously, the stage it returns, else {@code null}. */
        abstract CompletionStage<Void> make(RateLimiterStoreChangesTest test, RateLimiter limiter, String key,
                                            boolean async);

        /** Whether a call finds the change made, once the clock has moved {@link #after} it. */
        abstract boolean shows(RateLimiter limiter, String key);

        /** Whether the limiter says its store can make the change. */
        abstract boolean can(RateLimiter limiter);

        /** Asks for the change with an argument every store refuses. */
        abstract void makeMalformed(RateLimiter limiter, Instant now);

        /** Whether {@code store}, over the in-memory store, says it can make the change for {@code tier}. */
        boolean can(RateLimitStore store, Tier tier) {
            return switch (this) {
                case GIVE_BACK -> store.givesBack(tier);
                case PAUSE -> store.pauses(tier);
                case RECOUNT -> store.recounts(tier);
            };
        }
    }

    private RateLimiter.Builder limiter(RateLimitStore store, Change change) {
        return RateLimiter.builder().name("partner").store(store).clock(clock).tier(change.tier)
                .listener(new RateLimitListener() {
                    @Override
                    public void onStoreFailure(RateLimiter limiter, RuntimeException failure) {
                        failures.add(failure);
                    }
                });
    }

    private void admitThree(RateLimiter limiter, String key) {
        admittedAt = clock.instant();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.tryAcquire(key).allowed()).as("call %d", i + 1).isTrue();
        }
        assertThat(limiter.tryAcquire(key).allowed()).as("the fourth").isFalse();
    }

    /** Prepares each key, makes the change for the first synchronously and the second asynchronously. */
    private void makeChanges(Change change, RateLimiter limiter, Runnable beforeChanges) {
        for (String key : KEYS) {
            change.prepare(this, limiter, key);
        }
        millis.addAndGet(change.before.toMillis());
        beforeChanges.run();
        assertThat(change.make(this, limiter, KEYS.get(0), false)).isNull();
        assertThat(change.make(this, limiter, KEYS.get(1), true).toCompletableFuture().join()).isNull();
        millis.addAndGet(change.after.toMillis());
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void theChangeIsMadeInTheStore(Change change) {
        RateLimiter limiter = limiter(memory, change).build();

        assertThat(change.can(limiter)).isTrue();
        makeChanges(change, limiter, () -> { });
        assertThat(KEYS).allSatisfy(key -> assertThat(change.shows(limiter, key)).as(key).isTrue());
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void theKeyIsQualifiedByTheLimitersNameAsForDecisions(Change change) {
        RateLimiter limiter = limiter(memory, change).build();
        RateLimiter other = RateLimiter.builder().name("other").store(memory).clock(clock).tier(change.tier).build();
        for (String key : KEYS) {
            change.prepare(this, other, key);
        }

        makeChanges(change, limiter, () -> { });
        assertThat(KEYS).allSatisfy(key -> assertThat(change.shows(other, key))
                .as("another limiter's key of the same name").isFalse());
    }

    static Stream<Arguments> changesUnderStrictOrOpenPolicies() {
        return Stream.of(Change.values()).flatMap(change -> Stream.of(FailurePolicy.FAIL_OPEN, FailurePolicy.FAIL_CLOSED)
                .map(policy -> Arguments.of(change, policy)));
    }

    @ParameterizedTest
    @MethodSource("changesUnderStrictOrOpenPolicies")
    void anOutageNeverFailsTheCallerAndTheChangeIsLost(Change change, FailurePolicy policy) {
        SwitchableStore store = new SwitchableStore(memory);
        RateLimiter limiter = limiter(store, change).onStoreFailure(policy).build();

        makeChanges(change, limiter, () -> store.up = false);
        assertThat(failures).as("heard as store failures").hasSize(2)
                .allMatch(failure -> failure instanceof StoreUnavailableException);

        store.up = true;
        assertThat(KEYS).allSatisfy(key -> assertThat(change.shows(limiter, key)).as(key).isFalse());
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void underLocalFallbackTheFallbackStoreMakesTheChange(Change change) {
        SwitchableStore store = new SwitchableStore(memory);
        RateLimiter limiter = limiter(store, change).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();
        store.up = false;
        int[] failuresBefore = new int[1];

        makeChanges(change, limiter, () -> failuresBefore[0] = failures.size());
        // The permits of a call the fallback store admitted go back there without asking the store.
        assertThat(failures).as("the changes heard as store failures")
                .hasSize(failuresBefore[0] + (change == Change.PAUSE ? 2 : 0));
        assertThat(KEYS).allSatisfy(key -> assertThat(change.shows(limiter, key)).as("decided by the fallback store")
                .isTrue());

        store.up = true;
        assertThat(memory.estimatedKeyCount()).as("keys the store itself holds").isZero();
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aCallTheFallbackStoreAdmittedIsGivenBackThereAndNeverToTheStore(boolean async) {
        SwitchableStore store = new SwitchableStore(memory);
        RateLimiter limiter = RateLimiter.builder().name("wrong-codes").store(store).clock(clock)
                .tier(Tier.of(5, ofMinutes(1), FIXED_WINDOW)).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.tryAcquire("phone").allowed()).isTrue();
        }
        store.up = false;
        millis.addAndGet(10);
        Instant admittedAt = clock.instant();
        assertThat(limiter.tryAcquire("phone").allowed()).as("admitted by the fallback store").isTrue();
        store.up = true;
        millis.addAndGet(10);

        if (async) {
            limiter.giveBackAsync("phone", 1, null, admittedAt).toCompletableFuture().join();
        } else {
            limiter.giveBack("phone", 1, null, admittedAt);
        }

        assertThat(limiter.tryAcquire("phone").remaining()).as("what the store has left after a fourth call")
                .isEqualTo(1);
        assertThat(limiter.tryAcquire("phone").allowed()).isTrue();
        assertThat(limiter.tryAcquire("phone").allowed()).as("a sixth call of the store").isFalse();
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void aStoreThatCannotSaysSoAndItsLimiterRefuses(Change change) {
        RateLimitStore custom = new RateLimitStore() {
            @Override
            public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                return memory.tryAcquire(key, tiers, cost);
            }

            @Override
            public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                return memory.tryAcquireAsync(key, tiers, cost);
            }
        };
        RateLimiter limiter = limiter(custom, change).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();
        change.prepare(this, limiter, KEYS.get(0));

        assertThat(change.can(limiter)).isFalse();
        assertThatThrownBy(() -> change.make(this, limiter, KEYS.get(0), false))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessage(custom.getClass().getName() + " " + change.refusal);
        assertThatThrownBy(() -> change.make(this, limiter, KEYS.get(0), true).toCompletableFuture().join())
                .isInstanceOf(CompletionException.class).hasCauseInstanceOf(UnsupportedOperationException.class);
        assertThat(failures).as("no store failure").isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void aLimiterCanOnlyIfItsStoreCanForEveryTierOfEveryPlan(Change change) {
        RateLimitStore onlyItsTier = new ForwardingRateLimitStore(memory) {
            @Override
            public boolean givesBack(Tier tier) {
                return tier.algorithm() == change.tier.algorithm();
            }

            @Override
            public boolean pauses(Tier tier) {
                return tier.algorithm() == change.tier.algorithm();
            }

            @Override
            public boolean recounts(Tier tier) {
                return tier.algorithm() == change.tier.algorithm();
            }
        };
        Tier otherAlgorithm = Tier.of(3, ofMinutes(1), TOKEN_BUCKET);
        assertThat(change.can(onlyItsTier, otherAlgorithm)).isFalse();

        assertThat(change.can(limiter(onlyItsTier, change).build())).isTrue();
        assertThat(change.can(limiter(onlyItsTier, change).plan("gold", List.of(otherAlgorithm)).build())).isFalse();
    }

    @Test
    void aCallAdmittedLaterThanNowIsGivenBackOrRecountedAsIfJustNow() {
        RateLimiter giving = limiter(memory, Change.GIVE_BACK).build();
        admitThree(giving, "alice");
        giving.giveBack("alice", 1, null, clock.instant().plus(ofHours(1)));
        assertThat(giving.tryAcquire("alice").allowed()).isTrue();

        RateLimiter recounting = limiter(memory, Change.RECOUNT).build();
        admitThree(recounting, "alice");
        millis.addAndGet(30_000);
        recounting.recount("alice", 1, null, clock.instant().plus(ofHours(1)));
        millis.addAndGet(30_000);
        assertThat(recounting.tryAcquire("alice", 3).allowed()).as("one call recounted at 30 s").isFalse();
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void aMalformedChangeReachesTheCaller(Change change) {
        RateLimiter limiter = limiter(memory, change).onStoreFailure(FailurePolicy.LOCAL_FALLBACK).build();

        assertThatThrownBy(() -> change.makeMalformed(limiter, clock.instant()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(failures).isEmpty();
    }
}
