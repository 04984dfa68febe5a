package dev.sluice;

import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.internal.Ago;
import dev.sluice.internal.LocalAdmissions;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A named set of tiers over a store: the programmatic form of {@code @RateLimited}, and what
 * the aspect calls for it. Everything the annotation does, a {@code RateLimiter} does.
 *
 * <pre class="code">
 * RateLimiter otp = RateLimiter.builder()
 *         .name("otp")
 *         .store(store)
 *         .tier(Tier.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW).withBlockFor(Duration.ofMinutes(15)))
 *         .tier(Tier.of(20, Duration.ofDays(1), Algorithm.FIXED_WINDOW))
 *         .build();
 *
 * otp.acquire(clientIp);                     // throws RateLimitExceededException when limited
 * Decision decision = otp.tryAcquire(clientIp); // or decide yourself
 * </pre>
 *
 * <p><b>Plans.</b> A limiter may have named plans, each a set of tiers replacing the default
 * ones for the calls that name it ({@code otp.acquire(key, 1, "pro")}). Counts belong to the
 * key, not the plan: a tier counts per algorithm and window, so a key moving from one plan to
 * another mid-window keeps what it used in every window the plans share: an upgrade grants the
 * difference, not a fresh allowance. A plan the limiter does not have is decided by the default
 * tiers, and listeners hear of it ({@link RateLimitListener#onUnknownPlan}).
 *
 * <p><b>Live changes.</b> {@link #changeTiers(List)}, {@link #changeTiers(String, List)} and
 * {@link #changePlans(Map)} take effect on the next call, and keep counts the same way. Callers
 * already waiting ({@link OnLimit#WAIT}) obey them too, and a {@link #pause} made meanwhile: each
 * ask after a wait is decided by the limits in force, and a caller whose permit was reserved
 * before such a change gives it back, once due, and asks again.
 *
 * <p><b>Concurrency.</b> A {@linkplain Tier#concurrency concurrency tier} admits a call while
 * fewer than its limit of the key's calls are running, decided with the rate tiers in one store
 * call. An admitted call holds its permits until {@link #release} gives them back, which the
 * caller does when the call ends, whatever its outcome ({@code @RateLimited} does it for every
 * shape of call). A caller that waits ({@link OnLimit#WAIT}) asks again as permits may have come
 * free, in line with the key's other waiters.
 *
 * <pre class="code">
 * RateLimiter exports = RateLimiter.builder()
 *         .name("exports")
 *         .store(store)
 *         .tier(Tier.concurrency(2, Duration.ofSeconds(30)))
 *         .build();
 *
 * Instant admitted = Instant.now();
 * exports.acquire(tenant);
 * try {
 *     runExport(tenant);
 * } finally {
 *     exports.release(tenant, 1, null, admitted);
 * }
 * </pre>
 *
 * <p>Keys are counted per limiter: the store sees {@code name + ":" + key} (with {@code :} and
 * {@code \\} in the name escaped by a backslash), so two limiters never share counters. A
 * limiter is thread-safe.
 *
 * <p>When the store cannot decide a call (unreachable, too slow, its circuit breaker open), the
 * limiter's {@link FailurePolicy} answers it at once: admitted unchecked, refused with
 * {@link StoreUnavailableException}, or decided in this JVM (the default). The limiter logs the
 * first such call, then at most one line every 10 seconds while the store keeps failing. Which
 * exceptions of the store are such failures (outages) is set as for a circuit breaker
 * ({@link Builder#recordExceptions}, {@link Builder#ignoreExceptions}), by default as the store's
 * breaker says: every exception but programming errors ({@code NullPointerException},
 * {@code IllegalArgumentException}, {@code IllegalStateException},
 * {@code UnsupportedOperationException}, {@code ClassCastException}), which reach the caller.
 *
 * <p>A store that is <em>overloaded</em>, with more calls waiting for it than it may hold, may
 * refuse a call with {@link StoreOverloadedException} without deciding it. That is a spike, not
 * an outage, whatever the settings above say: no failure policy applies, nothing is logged, and
 * listeners hear a rejection ({@link RateLimitListener#onStoreOverloaded}), not a store failure.
 * The call is rejected with the tightest tier's limit and window, nothing remaining, and the
 * store's {@code retryAfter}: {@link #tryAcquire} returns that decision, {@link #acquire} throws
 * it as a {@link RateLimitExceededException} whose {@link RateLimitExceededException#overloaded()
 * overloaded()} is true, and a caller that waits waits {@code retryAfter} within its
 * {@code maxWait} and asks again, as after any rejection.
 */
public final class RateLimiter {

    private static final System.Logger LOGGER = System.getLogger(RateLimiter.class.getName());

    private final String name;
    private final String namespace;
    private final RateLimitStore store;
    /** The tiers and plans, replaced whole by a live change so that each call sees one version. */
    private volatile Limits limits;
    /** Whether the limits ever had a concurrency tier: calls may hold permits to release. */
    private volatile boolean everHeld;
    /**
     * How many times the limits changed or a key was paused: a caller whose permit was reserved
     * before such a change asks again once the permit is due, instead of going ahead.
     */
    private final AtomicLong changes = new AtomicLong();
    private final long cost;
    private final OnLimit onLimit;
    private final Duration maxWait;
    private final String message;
    private final InstantSource clock;
    private final Sleeper sleeper;
    private final WaitLines waitLines = new WaitLines();
    private final FailurePolicy onStoreFailure;
    /** Which exceptions of the store are outages, which take the failure policy. */
    private final Predicate<Throwable> isOutage;
    private final StoreFailureLog failureLog;
    private volatile @Nullable RateLimitStore fallbackStore;
    /** The calls the fallback store admitted: their permits go back to it, not to the store. */
    private final LocalAdmissions fallbackAdmissions;
    private final RateLimitListener[] listeners;
    /** The unknown plans logged so far, a few at most. */
    private final Set<String> loggedPlans = ConcurrentHashMap.newKeySet();
    /**
     * The store when it is the in-memory one, or the in-memory one beneath decorators that let
     * limiters decide without calling them: asked without making the store key.
     */
    private final @Nullable InMemoryRateLimitStore inMemoryStore;
    /** Told of each decision made with {@link #inMemoryStore}: the decorators' observers, if any. */
    private final ForwardingRateLimitStore.DecisionObserver inMemoryObserver;

    private RateLimiter(Builder builder) {
        this.name = builder.name;
        // Escaped so that no name and key can spell another limiter's name and key.
        this.namespace = name.replace("\\", "\\\\").replace(":", "\\:") + ':';
        this.store = builder.store;
        this.limits = new Limits(builder.tiers, builder.plans);
        this.everHeld = limits.holdsPermits;
        this.cost = builder.cost;
        this.onLimit = builder.onLimit;
        this.maxWait = builder.maxWait;
        this.message = builder.message;
        this.clock = builder.clock;
        this.sleeper = builder.sleeper;
        this.onStoreFailure = builder.onStoreFailure;
        StoreFailureFilter failures = builder.failures;
        this.isOutage = failures != null ? failures::isOutage
                : store.circuitBreaker().<Predicate<Throwable>>map(breaker -> breaker::isOutage)
                        .orElse(StoreFailureFilter.DEFAULT::isOutage);
        this.listeners = builder.listeners.toArray(new RateLimitListener[0]);
        List<ForwardingRateLimitStore.DecisionObserver> observers = new ArrayList<>();
        this.inMemoryStore = inMemoryBeneath(store, observers);
        this.inMemoryObserver = observers.size() == 1 ? observers.get(0) : new Observers(observers);
        this.failureLog = new StoreFailureLog(name, onStoreFailure, clock);
        this.fallbackStore = builder.fallbackStore;
        this.fallbackAdmissions = new LocalAdmissions(clock);
    }

    /**
     * Starts a limiter definition.
     *
     * @return a builder; name, store and at least one tier are required
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Decides one call of the default cost, without waiting or throwing.
     *
     * @param key the key to count the call for, not null
     * @return the decision; when allowed, the call has been counted
     * @throws StoreUnavailableException under {@link FailurePolicy#FAIL_CLOSED}, when the store
     *         cannot decide
     */
    public Decision tryAcquire(String key) {
        return tryAcquire(key, cost);
    }

    /**
     * Decides one call, without waiting or throwing.
     *
     * @param key  the key to count the call for, not null
     * @param cost permits the call takes, at least 1; a call costing more than a tier's limit is
     *             rejected, with that tier's window as {@code retryAfter}, without asking the store
     * @return the decision; when allowed, the call has been counted
     * @throws StoreUnavailableException under {@link FailurePolicy#FAIL_CLOSED}, when the store
     *         cannot decide
     */
    public Decision tryAcquire(String key, long cost) {
        return tryAcquire(key, cost, null);
    }

    /**
     * Decides one call under a plan, without waiting or throwing.
     *
     * @param key  the key to count the call for, not null
     * @param cost permits the call takes, at least 1
     * @param plan the plan whose tiers decide the call; {@code null} for the default tiers, and
     *             a plan this limiter does not have is decided by them too
     * @return the decision; when allowed, the call has been counted
     * @throws StoreUnavailableException under {@link FailurePolicy#FAIL_CLOSED}, when the store
     *         cannot decide
     */
    public Decision tryAcquire(String key, long cost, @Nullable String plan) {
        TierSet tiers = tiersOf(plan);
        Decision neverFits = neverFits(tiers, cost);
        if (neverFits != null) {
            return reported(key, neverFits);
        }
        try {
            return reported(key, decide(key, cost, tiers));
        } catch (StoreOverloadedException overload) {
            return reportedOverload(key, overloadDecision(tiers, overload), overload);
        }
    }

    /** The tiers a call of this plan is decided by. */
    private TierSet tiersOf(@Nullable String plan) {
        Limits current = limits;
        if (plan == null) {
            return current.defaults;
        }
        TierSet planned = current.plans.get(plan);
        if (planned != null) {
            return planned;
        }
        for (RateLimitListener listener : listeners) {
            listener.onUnknownPlan(this, plan);
        }
        if (loggedPlans.size() < 16 && loggedPlans.add(plan)) {
            LOGGER.log(System.Logger.Level.WARNING, () -> "Rate limiter '" + name + "' has no plan '"
                    + LogText.escape(plan) + "', so its default tiers decide the calls of that plan; its plans are " + current.plans.keySet());
        }
        return current.defaults;
    }

    /**
     * The tiers a call of this plan is decided by now, for a caller that asks again after
     * waiting: an unknown plan was reported when the caller came.
     */
    private TierSet currentTiers(@Nullable String plan) {
        Limits current = limits;
        TierSet planned = plan == null ? null : current.plans.get(plan);
        return planned != null ? planned : current.defaults;
    }

    /**
     * The rejection of a call that costs more than a tier's limit, which no wait would let pass;
     * {@code null} for a call that can fit. Such a call, whose cost usually comes from what a
     * client sent, is rejected without asking the store or counting it: the binding tier is the
     * longest of those the cost exceeds, and {@code retryAfter} its window.
     */
    private static @Nullable Decision neverFits(TierSet tiers, long cost) {
        if (cost <= tiers.smallestLimit) {
            return null;
        }
        Tier binding = null;
        for (Tier tier : tiers.list) {
            if (tier.limit() < cost && (binding == null || tier.window().compareTo(binding.window()) > 0)) {
                binding = tier;
            }
        }
        return new Decision(false, binding.limit(), 0, binding.window(), binding.window(), binding.window());
    }

    /**
     * The in-memory store that is {@code store}, or is beneath decorators of it that all let
     * limiters decide without calling them, whose observers are added to {@code observers},
     * outermost first; {@code null} for any other store.
     */
    private static @Nullable InMemoryRateLimitStore inMemoryBeneath(
            RateLimitStore store, List<ForwardingRateLimitStore.DecisionObserver> observers) {
        RateLimitStore beneath = store;
        while (beneath instanceof ForwardingRateLimitStore decorator) {
            ForwardingRateLimitStore.DecisionObserver observer = decorator.decisionObserver();
            if (observer == null) {
                return null;
            }
            observers.add(observer);
            beneath = decorator.delegate();
        }
        return beneath instanceof InMemoryRateLimitStore inMemory ? inMemory : null;
    }

    /**
     * Asks the store for a decision; a store failure takes the failure policy.
     *
     * @throws StoreOverloadedException when the store was overloaded, which is no outage
     */
    private Decision decide(String key, long cost, TierSet tiers) {
        Objects.requireNonNull(key, "key");
        InMemoryRateLimitStore inMemory = inMemoryStore;
        try {
            // The tiers were checked when they were set, and a cost within them needs no check.
            if (inMemory == null || cost < 1) {
                return store.tryAcquire(storeKey(key), tiers.list, cost);
            }
            ForwardingRateLimitStore.DecisionObserver observer = inMemoryObserver;
            Object deciding = observer.deciding();
            try {
                return inMemory.decide(namespace, key, tiers.list, cost);
            } finally {
                observer.decided(deciding);
            }
        } catch (RuntimeException e) {
            if (!isOutage.test(e)) {
                throw e;
            }
            return whenStoreFailed(e, storeKey(key), cost, tiers.list);
        }
    }

    private Decision reported(String key, Decision decision) {
        for (RateLimitListener listener : listeners) {
            listener.onDecision(this, key, decision);
        }
        return decision;
    }

    /** Reports the rejection of a call the overloaded store refused. */
    private Decision reportedOverload(String key, Decision decision, StoreOverloadedException overload) {
        for (RateLimitListener listener : listeners) {
            listener.onStoreOverloaded(this, key, decision, overload);
        }
        return decision;
    }

    /**
     * The rejection of a call the overloaded store refused without deciding it: the tightest
     * tier's limit and window, nothing remaining, and the store's {@code retryAfter}.
     */
    private static Decision overloadDecision(TierSet tiers, StoreOverloadedException overload) {
        Tier tightest = tiers.tightest;
        Duration retryAfter = overload.retryAfter();
        return new Decision(false, tightest.limit(), 0, retryAfter, retryAfter, tightest.window());
    }

    /**
     * Applies the failure policy: the one place a store's failure is handled, for synchronous
     * and asynchronous calls alike.
     *
     * @throws StoreUnavailableException under {@link FailurePolicy#FAIL_CLOSED}
     */
    private Decision whenStoreFailed(RuntimeException failure, String storeKey, long cost, List<Tier> tiers) {
        for (RateLimitListener listener : listeners) {
            listener.onStoreFailure(this, failure);
        }
        failureLog.record(failure, storeKey);
        return switch (onStoreFailure) {
            case FAIL_OPEN -> {
                Tier tightest = tiers.stream().min(Comparator.comparingLong(Tier::limit)).orElseThrow();
                yield new Decision(true, tightest.limit(), tightest.limit() - cost, Duration.ZERO, Duration.ZERO,
                        tightest.window());
            }
            case LOCAL_FALLBACK -> {
                Decision decision = fallbackStore().tryAcquire(storeKey, tiers, cost);
                if (decision.allowed()) {
                    fallbackAdmissions.admitted(storeKey, cost);
                }
                yield decision;
            }
            case FAIL_CLOSED -> throw StoreUnavailableException.of(name, failure, storeKey);
        };
    }

    private RateLimitStore fallbackStore() {
        RateLimitStore local = fallbackStore;
        if (local == null) {
            synchronized (this) {
                local = fallbackStore;
                if (local == null) {
                    local = InMemoryRateLimitStore.builder().clock(clock).build();
                    fallbackStore = local;
                }
            }
        }
        return local;
    }

    /**
     * Takes a permit of the default cost as this limiter's {@link OnLimit} says: at once or
     * not at all ({@code REJECT}), or waiting for up to {@code maxWait} ({@code WAIT}).
     *
     * @param key the key to count the call for, not null
     * @return the admitting decision
     * @throws RateLimitExceededException when the call is rejected; an interrupted wait
     *         rejects too, with the thread's interrupt flag set again (a permit the store had
     *         reserved for the caller stays taken)
     * @throws StoreUnavailableException under {@link FailurePolicy#FAIL_CLOSED}, when the store
     *         cannot decide
     */
    public Decision acquire(String key) {
        return acquire(key, cost);
    }

    /**
     * Takes {@code cost} permits as this limiter's {@link OnLimit} says.
     *
     * @param key  the key to count the call for, not null
     * @param cost permits the call takes, at least 1; a call costing more than a tier's limit is
     *             rejected, with that tier's window as {@code retryAfter}, without asking the store
     * @return the admitting decision
     * @throws RateLimitExceededException when the call is rejected
     * @see #acquire(String)
     */
    public Decision acquire(String key, long cost) {
        return acquire(key, cost, null);
    }

    /**
     * Takes {@code cost} permits under a plan as this limiter's {@link OnLimit} says.
     *
     * @param key  the key to count the call for, not null
     * @param cost permits the call takes, at least 1
     * @param plan the plan whose tiers decide the call; {@code null} (or a plan this limiter
     *             does not have) for the default tiers
     * @return the admitting decision
     * @throws RateLimitExceededException when the call is rejected
     * @see #acquire(String)
     */
    public Decision acquire(String key, long cost, @Nullable String plan) {
        TierSet tiers = tiersOf(plan);
        Decision neverFits = neverFits(tiers, cost);
        if (neverFits != null) {
            throw rejection(key, reported(key, neverFits));
        }
        if (onLimit == OnLimit.REJECT) {
            Decision decision;
            try {
                decision = decide(key, cost, tiers);
            } catch (StoreOverloadedException overload) {
                throw rejection(key, Answer.overloaded(tiers, overload));
            }
            reported(key, decision);
            if (decision.allowed()) {
                return decision;
            }
            throw rejection(key, decision);
        }
        Instant start = clock.instant();
        Instant deadline = start.plus(maxWait);
        // A caller that finds others waiting for this key gets in line behind them without asking.
        WaitLines.Turn turn = waitLines.arrive(key);
        Answer answer = null;
        try {
            if (turn.asks()) {
                answer = reserve(key, cost, tiers, deadline);
                while (waitBefore(answer.decision(), deadline) == null) {
                    Decision decision = served(key, cost, answer, start, false);
                    if (decision != null) {
                        return decision;
                    }
                    answer = reserve(key, cost, currentTiers(plan), deadline);
                }
                waitLines.toldToWait(turn, answer.decision());
            }
            if (turn.awaitFirst()) {
                // Others went first: what this caller was told before is out of date.
                answer = null;
            }
            while (true) {
                while (answer == null || waitBefore(answer.decision(), deadline) != null) {
                    if (answer != null) {
                        turn.rejected(answer.decision());
                        sleep(key, answer.decision(), waitBefore(answer.decision(), deadline));
                    }
                    // The limits may have changed while the caller waited: it is decided by those in force.
                    answer = reserve(key, cost, currentTiers(plan), deadline);
                }
                Decision decision = served(key, cost, answer, start, true);
                if (decision != null) {
                    return decision;
                }
                answer = null;
            }
        } catch (InterruptedException e) {
            Decision latest = answer != null ? null : turn.latestRejection();
            Thread.currentThread().interrupt();
            reportWait(start);
            if (answer != null) {
                throw rejection(key, answer);
            }
            if (latest != null) {
                throw rejection(key, reported(key, latest));
            }
            try {
                throw rejection(key, reported(key, decide(key, cost, tiers)));
            } catch (StoreOverloadedException overload) {
                throw rejection(key, Answer.overloaded(tiers, overload));
            }
        } finally {
            waitLines.leave(turn);
        }
    }

    /**
     * Hands a final decision to the caller once its permit is due: after sleeping a reserved
     * permit's delay. An interrupted sleep rejects the caller, with the thread's interrupt flag
     * set again; the permit reserved for it stays taken.
     *
     * @param waited whether the caller waited in line before
     * @return the decision; {@code null} when the limits changed or a key was paused while the
     *         caller slept, and its permit was given back for it to ask again
     */
    private @Nullable Decision served(String key, long cost, Answer answer, Instant start, boolean waited) {
        Reservation reservation = answer.reservation();
        if (!reservation.delay().isZero()) {
            try {
                sleeper.sleep(reservation.delay());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reportWait(start);
                throw rejection(key, reported(key, unserved(reservation)));
            }
            if (outdated(answer)) {
                giveBackReserved(key, cost, answer);
                return null;
            }
        }
        return outcome(key, answer, waited || !reservation.delay().isZero() ? start : null);
    }

    /**
     * Sleeps before asking again after a rejection: for one by a concurrency tier, until a call of
     * the key ends in this instance, or for the store's hint of a wait, whichever is sooner.
     */
    private void sleep(String key, Decision rejection, Duration wait) throws InterruptedException {
        if (rejection.concurrency()) {
            sleeper.sleep(wait, waitLines.released(key));
        } else {
            sleeper.sleep(wait);
        }
    }

    /** {@link #sleep(String, Decision, Duration)} without blocking. */
    private CompletionStage<Void> sleepAsync(String key, Decision rejection, Duration wait) {
        return rejection.concurrency() ? sleeper.sleepAsync(wait, waitLines.released(key)) : sleeper.sleepAsync(wait);
    }

    /** Whether the limits changed, or a key was paused, since the store gave this answer. */
    private boolean outdated(Answer answer) {
        return changes.get() != answer.asOf();
    }

    /**
     * Gives back the permit reserved for a caller that is to ask again, where the store can: it
     * was counted as of now, when it fell due. A store that cannot give it back keeps it, the
     * strict side.
     */
    private void giveBackReserved(String key, long cost, Answer answer) {
        List<Tier> tiers = answer.tiers().list;
        if (tiers.stream().allMatch(store::givesBack)) {
            String storeKey = storeKey(key);
            change(store -> store.giveBack(storeKey, tiers, cost, Duration.ZERO), false);
        }
    }

    /** {@link #giveBackReserved} without blocking. */
    private CompletionStage<Void> giveBackReservedAsync(String key, long cost, Answer answer) {
        List<Tier> tiers = answer.tiers().list;
        if (!tiers.stream().allMatch(store::givesBack)) {
            return CompletableFuture.completedFuture(null);
        }
        String storeKey = storeKey(key);
        return changeAsync(store -> store.giveBackAsync(storeKey, tiers, cost, Duration.ZERO),
                store -> store.giveBack(storeKey, tiers, cost, Duration.ZERO), false);
    }

    /** The rejection of a caller that gave up before its reserved permit was due. */
    private static Decision unserved(Reservation reservation) {
        Decision reserved = reservation.decision();
        return new Decision(false, reserved.limit(), 0, reserved.resetAfter(), reservation.delay(), reserved.window());
    }

    /**
     * Reports a final answer and hands it to the caller: its decision returned when it admits,
     * thrown as a rejection when not.
     *
     * @param waitingSince when the caller started waiting in line, or {@code null} if it did not
     */
    private Decision outcome(String key, Answer answer, @Nullable Instant waitingSince) {
        if (waitingSince != null) {
            reportWait(waitingSince);
        }
        Decision decision = answer.decision();
        if (decision.allowed()) {
            return reported(key, decision);
        }
        throw rejection(key, answer);
    }

    private void reportWait(Instant start) {
        Duration waited = Duration.between(start, clock.instant());
        for (RateLimitListener listener : listeners) {
            listener.onWait(this, waited);
        }
    }

    /**
     * Takes a permit of the default cost without blocking the caller.
     *
     * @param key the key to count the call for, not null
     * @return a stage completing with the admitting decision, or failing with
     *         {@link RateLimitExceededException}
     * @see #acquireAsync(String, long)
     */
    public CompletionStage<Decision> acquireAsync(String key) {
        return acquireAsync(key, cost);
    }

    /**
     * Takes {@code cost} permits as {@link #acquire(String, long)} does, but never blocks the
     * calling thread: the store is asked asynchronously and waits are scheduled with
     * {@link Sleeper#sleepAsync}. Cancelling the returned future while the caller waits (as a
     * cancelled {@code Mono} or coroutine does) takes it out of line at once and gives back the
     * permit reserved for it, where the store can.
     *
     * @param key  the key to count the call for, not null
     * @param cost permits the call takes, at least 1; more than a tier's limit is rejected
     * @return a stage completing with the admitting decision, or failing with
     *         {@link RateLimitExceededException} (or, under {@link FailurePolicy#FAIL_CLOSED}
     *         when the store cannot decide, {@link StoreUnavailableException})
     */
    public CompletionStage<Decision> acquireAsync(String key, long cost) {
        return acquireAsync(key, cost, null);
    }

    /**
     * Takes {@code cost} permits under a plan as {@link #acquire(String, long, String)} does,
     * without blocking the calling thread.
     *
     * @param key  the key to count the call for, not null
     * @param cost permits the call takes, at least 1
     * @param plan the plan whose tiers decide the call; {@code null} (or a plan this limiter
     *             does not have) for the default tiers
     * @return a stage completing with the admitting decision, or failing with
     *         {@link RateLimitExceededException}
     * @see #acquireAsync(String, long)
     */
    public CompletionStage<Decision> acquireAsync(String key, long cost, @Nullable String plan) {
        TierSet tiers = tiersOf(plan);
        Decision neverFits = neverFits(tiers, cost);
        if (neverFits != null) {
            return CompletableFuture.failedFuture(rejection(key, reported(key, neverFits)));
        }
        Instant start = clock.instant();
        Instant deadline = start.plus(maxWait);
        if (onLimit == OnLimit.REJECT) {
            return reserveAsync(key, cost, tiers, start).thenCompose(decided -> outcomeAsync(key, decided, null));
        }
        // A caller that finds others waiting for this key gets in line behind them without asking.
        Waiter waiter = new Waiter(key, cost, plan, waitLines.arrive(key), start, deadline);
        CompletionStage<@Nullable Answer> asked = waiter.turn.asks()
                ? reserveAsync(key, cost, tiers, deadline) : CompletableFuture.completedFuture(null);
        CompletableFuture<Decision> served = waiter.served;
        asked.thenCompose(answer -> askedAsync(waiter, answer)).whenComplete((done, failure) -> {
            // Out of the line before the caller hears, so that its next call finds the line as it
            // is; the next caller's turn after the caller's own continuations, so that callers
            // hear of their permits in the order they came.
            WaitLines.Turn next = waitLines.remove(waiter.turn);
            if (failure != null) {
                served.completeExceptionally(failure);
            } else if (!served.complete(done) && done.allowed()) {
                // Cancelled as its permit came.
                giveBackQuietly(key, cost, plan);
            }
            waitLines.handOver(next);
        });
        served.whenComplete((done, failure) -> {
            if (served.isCancelled()) {
                waiter.cancelled();
            }
        });
        return served;
    }

    /**
     * Serves a caller that asked on arrival, or, told to wait or asking later, waits in line
     * ({@code answer} is {@code null} when it did not ask).
     */
    private CompletionStage<Decision> askedAsync(Waiter waiter, @Nullable Answer answer) {
        if (waiter.served.isCancelled()) {
            return CompletableFuture.failedFuture(new CancellationException());
        }
        if (answer != null && waitBefore(answer.decision(), waiter.deadline) == null) {
            return servedAsync(waiter, answer, false).thenCompose(decision -> decision != null
                    ? CompletableFuture.completedFuture(decision)
                    : reserveAsync(waiter.key, waiter.cost, currentTiers(waiter.plan), waiter.deadline)
                            .thenCompose(again -> askedAsync(waiter, again)));
        }
        if (answer != null) {
            waitLines.toldToWait(waiter.turn, answer.decision());
        }
        // Handed over on another thread, so that a long line served at once never nests.
        return waiter.turn.first.thenComposeAsync(othersFirst -> inLineAsync(waiter, othersFirst ? null : answer));
    }

    /**
     * Asks the store as first in line, sleeping between asks, until an answer is final, and
     * serves it; the limits in force decide each ask.
     */
    private CompletionStage<Decision> inLineAsync(Waiter waiter, @Nullable Answer answer) {
        if (waiter.served.isCancelled()) {
            return CompletableFuture.failedFuture(new CancellationException());
        }
        if (answer == null) {
            return reserveAsync(waiter.key, waiter.cost, currentTiers(waiter.plan), waiter.deadline)
                    .thenCompose(asked -> inLineAsync(waiter, asked));
        }
        Duration wait = waitBefore(answer.decision(), waiter.deadline);
        if (wait == null) {
            return servedAsync(waiter, answer, true).thenCompose(decision -> decision != null
                    ? CompletableFuture.completedFuture(decision)
                    : inLineAsync(waiter, null));
        }
        waiter.turn.rejected(answer.decision());
        return waiter.sleeping(sleepAsync(waiter.key, answer.decision(), wait))
                .thenCompose(ignored -> inLineAsync(waiter, null));
    }

    /**
     * {@link #served} without blocking: the delay of a reserved permit is slept asynchronously.
     *
     * @return a stage completing with the decision, or with {@code null} when the permit was
     *         given back for the caller to ask again
     */
    private CompletionStage<@Nullable Decision> servedAsync(Waiter waiter, Answer answer, boolean waited) {
        Duration delay = answer.reservation().delay();
        if (delay.isZero()) {
            return outcomeAsync(waiter.key, answer, waited ? waiter.start : null);
        }
        waiter.reserved.set(answer);
        if (waiter.served.isCancelled() && waiter.reserved.getAndSet(null) != null) {
            // Cancelled while the store answered.
            return giveBackReservedAsync(waiter.key, waiter.cost, answer)
                    .thenCompose(given -> CompletableFuture.failedFuture(new CancellationException()));
        }
        return waiter.sleeping(sleeper.sleepAsync(delay)).thenCompose(ignored -> {
            if (waiter.reserved.getAndSet(null) == null) {
                // Cancelled while it slept, and the permit given back then.
                return CompletableFuture.failedFuture(new CancellationException());
            }
            return outdated(answer)
                    ? giveBackReservedAsync(waiter.key, waiter.cost, answer).thenApply(given -> (Decision) null)
                    : outcomeAsync(waiter.key, answer, waiter.start);
        });
    }

    /** Gives back a permit a cancelled caller was admitted with, where the store can; never fails. */
    private void giveBackQuietly(String key, long cost, @Nullable String plan) {
        if (!currentTiers(plan).list.stream().allMatch(store::givesBack)) {
            return;
        }
        try {
            Instant now = clock.instant();
            giveBackAsync(key, cost, plan, now);
            releaseAsync(key, cost, plan, now);
        } catch (RuntimeException e) {
            // Kept counted, the strict side: the store could not take it back.
        }
    }

    /**
     * One asynchronous caller waiting for a permit: its place in line, and the answer it is to
     * hear, which it may cancel.
     */
    private final class Waiter {

        final String key;
        final long cost;
        final @Nullable String plan;
        final WaitLines.Turn turn;
        final Instant start;
        final Instant deadline;
        final CompletableFuture<Decision> served = new CompletableFuture<>();
        /** The answer whose reserved permit the caller sleeps until, while it does. */
        final AtomicReference<@Nullable Answer> reserved = new AtomicReference<>();
        /** The sleep the caller is in, if any, which a cancellation stops. */
        private final AtomicReference<@Nullable CompletionStage<Void>> sleep = new AtomicReference<>();

        Waiter(String key, long cost, @Nullable String plan, WaitLines.Turn turn, Instant start, Instant deadline) {
            this.key = key;
            this.cost = cost;
            this.plan = plan;
            this.turn = turn;
            this.start = start;
            this.deadline = deadline;
        }

        /**
         * The caller cancelled: out of line at once, so that the callers behind it move up, and
         * the permit reserved for it, if it sleeps for one, back to the store.
         */
        void cancelled() {
            waitLines.handOver(waitLines.remove(turn));
            Answer held = reserved.getAndSet(null);
            if (held != null) {
                giveBackReservedAsync(key, cost, held);
            }
            stopSleeping(sleep.getAndSet(null));
        }

        /** Records the sleep the caller goes into, stopping it at once if the caller has cancelled already. */
        CompletionStage<Void> sleeping(CompletionStage<Void> slept) {
            sleep.set(slept);
            if (served.isCancelled()) {
                stopSleeping(sleep.getAndSet(null));
            }
            return slept;
        }

        /** Cancels a sleep, so that the sleeper's timer does not fire for a caller that went away. */
        private static void stopSleeping(@Nullable CompletionStage<Void> slept) {
            if (slept instanceof Future<?> future) {
                future.cancel(false);
            }
        }
    }

    private CompletionStage<Decision> outcomeAsync(String key, Answer answer, @Nullable Instant waitingSince) {
        try {
            return CompletableFuture.completedFuture(outcome(key, answer, waitingSince));
        } catch (RateLimitExceededException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Asks the store for a permit the caller may wait for until {@code deadline}; a store failure
     * takes the failure policy, and the store's overload is a rejection.
     */
    private Answer reserve(String key, long cost, TierSet tiers, Instant deadline) {
        Objects.requireNonNull(key, "key");
        Decision neverFits = neverFits(tiers, cost);
        if (neverFits != null) {
            // Limits lowered while the caller waited.
            return new Answer(Reservation.now(neverFits), tiers, changes.get());
        }
        InMemoryRateLimitStore inMemory = inMemoryStore;
        long maxWait = millisUntil(deadline);
        long asOf = changes.get();
        try {
            if (inMemory == null || cost < 1) {
                return new Answer(store.reserve(storeKey(key), tiers.list, cost, Duration.ofMillis(maxWait)), tiers, asOf);
            }
            ForwardingRateLimitStore.DecisionObserver observer = inMemoryObserver;
            Object deciding = observer.deciding();
            try {
                return new Answer(inMemory.reserve(namespace, key, tiers.list, cost, maxWait), tiers, asOf);
            } finally {
                observer.decided(deciding);
            }
        } catch (StoreOverloadedException overload) {
            return Answer.overloaded(tiers, overload);
        } catch (RuntimeException e) {
            if (!isOutage.test(e)) {
                throw e;
            }
            return new Answer(Reservation.now(whenStoreFailed(e, storeKey(key), cost, tiers.list)), tiers, asOf);
        }
    }

    /** {@link #reserve} without blocking. */
    private CompletionStage<Answer> reserveAsync(String key, long cost, TierSet tiers, Instant deadline) {
        Decision neverFits = neverFits(tiers, cost);
        if (neverFits != null) {
            // Limits lowered while the caller waited.
            return CompletableFuture.completedFuture(new Answer(Reservation.now(neverFits), tiers, changes.get()));
        }
        String storeKey = storeKey(key);
        long asOf = changes.get();
        CompletionStage<Reservation> reserved;
        try {
            reserved = store.reserveAsync(storeKey, tiers.list, cost, Duration.ofMillis(millisUntil(deadline)));
        } catch (RuntimeException e) {
            reserved = CompletableFuture.failedFuture(e);
        }
        return reserved.handle((reservation, failure) -> {
            if (failure == null) {
                return new Answer(reservation, tiers, asOf);
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (cause instanceof StoreOverloadedException overload) {
                return Answer.overloaded(tiers, overload);
            }
            if (!isOutage.test(cause)) {
                throw failure instanceof CompletionException completion ? completion : new CompletionException(cause);
            }
            RuntimeException storeFailure = cause instanceof RuntimeException runtime ? runtime
                    : new StoreUnavailableException(StoreUnavailableException.describe(cause, storeKey),
                            Duration.ofSeconds(1));
            return new Answer(Reservation.now(whenStoreFailed(storeFailure, storeKey, cost, tiers.list)), tiers, asOf);
        });
    }

    /** Milliseconds from now until {@code deadline}; zero once it has passed. */
    private long millisUntil(Instant deadline) {
        return Math.max(0, Duration.between(clock.instant(), deadline).toMillis());
    }

    /** How long to wait before trying again, or {@code null} when the decision is final. */
    private @Nullable Duration waitBefore(Decision decision, Instant deadline) {
        if (decision.allowed() || onLimit == OnLimit.REJECT) {
            return null;
        }
        Duration wait = decision.retryAfter();
        return wait.compareTo(Duration.between(clock.instant(), deadline)) > 0 ? null : wait;
    }

    private RateLimitExceededException rejection(String key, Decision decision) {
        return new RateLimitExceededException(name, key, decision, message);
    }

    /**
     * Reports a rejecting answer and makes its exception: the limiter's message, or, for a call
     * the overloaded store refused, the store's overload as reason and cause.
     */
    private RateLimitExceededException rejection(String key, Answer answer) {
        StoreOverloadedException overload = answer.overload();
        if (overload == null) {
            return rejection(key, reported(key, answer.decision()));
        }
        return new RateLimitExceededException(name, key, reportedOverload(key, answer.decision(), overload), null,
                overload);
    }

    /**
     * Forgets what this limiter counted for a key, and any block of it, so that its next call is
     * decided as a fresh key's: how an operator unblocks a caller. The key is qualified by the
     * limiter's name as for decisions; the local fallback store forgets it too, if this limiter
     * has one. Its counts in the windows of every plan are forgotten too. The failure policy does
     * not apply: a store that cannot be reached fails the call.
     *
     * @param key the key, as given to {@link #tryAcquire(String)}
     * @throws StoreUnavailableException when the store cannot be reached in time
     * @throws UnsupportedOperationException when the store cannot forget a key
     */
    public void reset(String key) {
        String storeKey = storeKey(key);
        List<Tier> everyWindow = limits.everyWindow();
        // The fallback first: while the store is down, it is what decides.
        RateLimitStore local = fallbackStore;
        if (local != null) {
            local.reset(storeKey, everyWindow);
        }
        store.reset(storeKey, everyWindow);
    }

    /**
     * Gives back the permits of a call this limiter admitted, as if it had not been made (see
     * {@link RateLimitStore#giveBack}), with the tiers its plan has now: how a call counted
     * before it ran is let off once its outcome says it does not count. The permits go back
     * where they were taken: to the local fallback store for a call it admitted while the store
     * could not be reached (found by its key, cost and {@code admittedAt}, within a second of when
     * it decided), to the store for any other. A store that cannot be reached is a store failure
     * as for decisions (listeners hear of it), but the call never fails: under
     * {@link FailurePolicy#LOCAL_FALLBACK} the permits go back to the local fallback store, which
     * decided the call if the store was down then too; otherwise the call stays counted, the
     * strict side.
     *
     * @param key        the key, as given when the call was admitted
     * @param cost       the permits the call took
     * @param plan       the call's plan, as given when it was admitted
     * @param admittedAt when the call was admitted, by this limiter's clock (a registry's
     *                   limiters use {@link RateLimiterRegistry#clock()})
     * @throws UnsupportedOperationException when the store cannot give permits back (see
     *         {@link #givesBack()})
     */
    public void giveBack(String key, long cost, @Nullable String plan, Instant admittedAt) {
        String storeKey = storeKey(key);
        List<Tier> tiers = tiersOf(plan).rates;
        if (tiers.isEmpty()) {
            return;
        }
        Duration ago = since(admittedAt);
        RateLimitStore admittedBy = admittedBy(storeKey, cost, admittedAt);
        if (admittedBy != null) {
            admittedBy.giveBack(storeKey, tiers, cost, ago);
            return;
        }
        change(store -> store.giveBack(storeKey, tiers, cost, ago), false);
    }

    /**
     * Gives back permits as {@link #giveBack} does, without blocking the calling thread.
     *
     * @param key        the key, as given when the call was admitted
     * @param cost       the permits the call took
     * @param plan       the call's plan
     * @param admittedAt when the call was admitted, by this limiter's clock
     * @return a stage completing once the permits are back, or once the store failed; it fails
     *         only with {@link UnsupportedOperationException} and other programming errors
     */
    public CompletionStage<Void> giveBackAsync(String key, long cost, @Nullable String plan, Instant admittedAt) {
        String storeKey = storeKey(key);
        List<Tier> tiers = tiersOf(plan).rates;
        if (tiers.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        Duration ago = since(admittedAt);
        RateLimitStore admittedBy = admittedBy(storeKey, cost, admittedAt);
        if (admittedBy != null) {
            return admittedBy.giveBackAsync(storeKey, tiers, cost, ago);
        }
        return changeAsync(store -> store.giveBackAsync(storeKey, tiers, cost, ago),
                store -> store.giveBack(storeKey, tiers, cost, ago), false);
    }

    /**
     * Gives back the permits a call holds in the {@linkplain Tier#concurrency concurrency tiers}
     * of its plan, once it has ended, whatever its outcome; a limiter without such tiers does
     * nothing. They go back where they were taken, and a store that cannot be reached is
     * answered, as for {@link #giveBack}. A store that shares permits between processes lets a
     * permit whose release was lost go when its lease runs out.
     *
     * @param key        the key, as given when the call was admitted
     * @param cost       the permits the call took
     * @param plan       the call's plan, as given when it was admitted
     * @param admittedAt when the call was admitted, by this limiter's clock
     */
    public void release(String key, long cost, @Nullable String plan, Instant admittedAt) {
        List<Tier> held = heldTiers(plan, cost);
        if (held.isEmpty()) {
            return;
        }
        Duration ago = since(admittedAt);
        InMemoryRateLimitStore inMemory = inMemoryStore;
        try {
            if (inMemory != null && fallbackStore == null) {
                // As decisions go: to the in-memory store beneath decorators, without making the store key.
                inMemory.giveBack(namespace, key, held, cost, Ago.millis(ago));
                return;
            }
            String storeKey = storeKey(key);
            RateLimitStore admittedBy = admittedBy(storeKey, cost, admittedAt);
            if (admittedBy != null) {
                admittedBy.giveBack(storeKey, held, cost, ago);
            } else {
                change(store -> store.giveBack(storeKey, held, cost, ago), false);
            }
        } finally {
            released(key, ago);
        }
    }

    /** Wakes the first caller waiting in the key's line, and tells the listeners how long the call held its permits. */
    private void released(String key, Duration held) {
        waitLines.release(key);
        for (RateLimitListener listener : listeners) {
            listener.onRelease(this, key, held);
        }
    }

    /**
     * Releases a call's permits as {@link #release} does, without blocking the calling thread.
     *
     * @param key        the key, as given when the call was admitted
     * @param cost       the permits the call took
     * @param plan       the call's plan
     * @param admittedAt when the call was admitted, by this limiter's clock
     * @return a stage completing once the permits are back, or once the store failed; it fails
     *         only with programming errors
     */
    public CompletionStage<Void> releaseAsync(String key, long cost, @Nullable String plan, Instant admittedAt) {
        List<Tier> held = heldTiers(plan, cost);
        if (held.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        String storeKey = storeKey(key);
        Duration ago = since(admittedAt);
        RateLimitStore admittedBy = admittedBy(storeKey, cost, admittedAt);
        CompletionStage<Void> released = admittedBy != null ? admittedBy.giveBackAsync(storeKey, held, cost, ago)
                : changeAsync(store -> store.giveBackAsync(storeKey, held, cost, ago),
                        store -> store.giveBack(storeKey, held, cost, ago), false);
        return released.whenComplete((done, failure) -> released(key, ago));
    }

    /**
     * Whether this limiter has a concurrency tier in any plan: its admitted calls hold permits
     * until they are {@linkplain #release released}.
     *
     * @return whether calls must be released when they end
     */
    public boolean holdsPermits() {
        return limits.holdsPermits;
    }

    /**
     * The concurrency tier to give a plan's held permits back through. Every concurrency tier
     * of a key counts the same permits, so one changed or removed since the call was admitted
     * still releases them through a tier like it; none, when this limiter never held permits.
     */
    private List<Tier> heldTiers(@Nullable String plan, long cost) {
        List<Tier> held = currentTiers(plan).held;
        if (held.isEmpty() && !everHeld) {
            return held;
        }
        Tier tier = held.isEmpty() ? Tier.concurrency(cost, Tier.DEFAULT_LEASE) : held.get(0);
        return tier.limit() >= cost && !held.isEmpty() ? held : List.of(Tier.concurrency(cost, tier.window()));
    }

    /**
     * Whether this limiter's store can give back the permits of every tier of every plan, which
     * counting calls by their outcome needs.
     *
     * @return whether {@link #giveBack} is supported for every call
     */
    public boolean givesBack() {
        return everyTier(store::givesBack);
    }

    /**
     * Rejects every call of a key under a plan until {@code duration} from now (see
     * {@link RateLimitStore#pause}): how calls to a partner that answered "come back later"
     * ({@code Retry-After}) wait until then instead of being sent. The key's calls are rejected
     * as under a block, with the time left as {@code retryAfter}; a longer block or pause in
     * place holds. The local fallback store, if this limiter has made one, pauses the key too:
     * it decides whenever the store fails. A store that cannot be reached is a store failure as
     * for decisions (listeners hear of it), but the call never fails: under
     * {@link FailurePolicy#LOCAL_FALLBACK} the local fallback store pauses the key; otherwise the
     * pause is lost, as the store cannot hold it.
     *
     * @param key      the key, as given to {@link #tryAcquire(String)}
     * @param plan     the plan whose tiers are paused; {@code null} for the default tiers
     * @param duration how long the key stays paused; zero or negative for not at all
     * @throws IllegalArgumentException when {@code duration} is longer than 2<sup>52</sup> ms
     * @throws UnsupportedOperationException when the store cannot pause a key (see
     *         {@link #pauses()})
     */
    public void pause(String key, @Nullable String plan, Duration duration) {
        String storeKey = storeKey(key);
        List<Tier> tiers = tiersOf(plan).list;
        Objects.requireNonNull(duration, "duration");
        change(store -> store.pause(storeKey, tiers, duration), true);
        RateLimitStore local = fallbackStore;
        if (local != null) {
            // The fallback store decides whenever the store fails: it holds the pause too.
            local.pause(storeKey, tiers, duration);
        }
        changes.incrementAndGet();
    }

    /**
     * Pauses a key as {@link #pause} does, without blocking the calling thread.
     *
     * @param key      the key, as given to {@link #tryAcquire(String)}
     * @param plan     the plan whose tiers are paused; {@code null} for the default tiers
     * @param duration how long the key stays paused
     * @return a stage completing once the key is paused, or once the store failed; it fails only
     *         with {@link UnsupportedOperationException} and other programming errors
     */
    public CompletionStage<Void> pauseAsync(String key, @Nullable String plan, Duration duration) {
        String storeKey = storeKey(key);
        List<Tier> tiers = tiersOf(plan).list;
        Objects.requireNonNull(duration, "duration");
        return changeAsync(store -> store.pauseAsync(storeKey, tiers, duration),
                store -> store.pause(storeKey, tiers, duration), true).thenRun(() -> {
                    RateLimitStore local = fallbackStore;
                    if (local != null) {
                        // The fallback store decides whenever the store fails: it holds the pause too.
                        local.pause(storeKey, tiers, duration);
                    }
                    changes.incrementAndGet();
                });
    }

    /**
     * Tells this limiter that another instance sharing its store paused one of its keys there,
     * as {@link #pause} does in this one: a caller of this instance whose permit was reserved
     * before the notice gives it back once due and asks the store again, so that it waits
     * through the pause too. Callers that do not hold a reserved permit ask the store anyway.
     */
    public void pausedElsewhere() {
        changes.incrementAndGet();
    }

    /**
     * Whether this limiter's store can pause a key under every plan, which obeying a partner's
     * {@code Retry-After} needs.
     *
     * @return whether {@link #pause} is supported for every plan
     */
    public boolean pauses() {
        return everyTier(store::pauses);
    }

    /**
     * Counts a call this limiter admitted as if it had been admitted now (see
     * {@link RateLimitStore#recount}), with the tiers its plan has now: how a limiter of calls to
     * a partner that counts each call when it arrives keeps its sliding logs in step with the
     * partner's, by recounting each call when its answer comes. Other algorithms keep their
     * counts. A call the local fallback store admitted is recounted there, as
     * {@link #giveBack} finds it. A store that cannot be reached is a store failure as for
     * decisions (listeners hear of it), but the call never fails: under
     * {@link FailurePolicy#LOCAL_FALLBACK} the call is recounted by the local fallback store,
     * which decided it if the store was down then too; otherwise it stays counted from when it
     * was admitted.
     *
     * @param key        the key, as given when the call was admitted
     * @param cost       the permits the call took
     * @param plan       the call's plan, as given when it was admitted
     * @param admittedAt when the call was admitted, by this limiter's clock (a registry's
     *                   limiters use {@link RateLimiterRegistry#clock()})
     * @throws UnsupportedOperationException when the store cannot recount calls (see
     *         {@link #recounts()})
     */
    public void recount(String key, long cost, @Nullable String plan, Instant admittedAt) {
        String storeKey = storeKey(key);
        List<Tier> tiers = tiersOf(plan).rates;
        if (tiers.isEmpty()) {
            return;
        }
        Duration ago = since(admittedAt);
        RateLimitStore admittedBy = admittedBy(storeKey, cost, admittedAt);
        if (admittedBy != null) {
            admittedBy.recount(storeKey, tiers, cost, ago);
            return;
        }
        change(store -> store.recount(storeKey, tiers, cost, ago), false);
    }

    /**
     * Recounts a call as {@link #recount} does, without blocking the calling thread.
     *
     * @param key        the key, as given when the call was admitted
     * @param cost       the permits the call took
     * @param plan       the call's plan
     * @param admittedAt when the call was admitted, by this limiter's clock
     * @return a stage completing once the call is recounted, or once the store failed; it fails
     *         only with {@link UnsupportedOperationException} and other programming errors
     */
    public CompletionStage<Void> recountAsync(String key, long cost, @Nullable String plan, Instant admittedAt) {
        String storeKey = storeKey(key);
        List<Tier> tiers = tiersOf(plan).rates;
        if (tiers.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        Duration ago = since(admittedAt);
        RateLimitStore admittedBy = admittedBy(storeKey, cost, admittedAt);
        if (admittedBy != null) {
            return admittedBy.recountAsync(storeKey, tiers, cost, ago);
        }
        return changeAsync(store -> store.recountAsync(storeKey, tiers, cost, ago),
                store -> store.recount(storeKey, tiers, cost, ago), false);
    }

    /**
     * Whether this limiter's store can recount calls of every tier of every plan.
     *
     * @return whether {@link #recount} is supported for every call
     */
    public boolean recounts() {
        return everyTier(store::recounts);
    }

    private boolean everyTier(Predicate<Tier> can) {
        for (TierSet tiers : limits.all()) {
            for (Tier tier : tiers.list) {
                if (!can.test(tier)) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * The fallback store, when it admitted the call (while the store could not be reached): its
     * permits go back there, never to the store, which did not count it. {@code null} for a call
     * the store admitted.
     */
    private @Nullable RateLimitStore admittedBy(String storeKey, long cost, Instant admittedAt) {
        RateLimitStore local = fallbackStore;
        return local != null && fallbackAdmissions.taken(storeKey, cost, admittedAt.toEpochMilli()) ? local : null;
    }

    private Duration since(Instant admittedAt) {
        Duration ago = Duration.between(Objects.requireNonNull(admittedAt, "admittedAt"), clock.instant());
        return ago.isNegative() ? Duration.ZERO : ago;
    }

    /**
     * Changes what the store holds for a key outside a decision (gives back, pauses, recounts).
     * An outage does not fail the call: it is heard as a store failure (the decisions of the same
     * outage are logged), and the change is made by the local fallback store instead, if any.
     *
     * @param makeFallback whether to make the local fallback store for the change if no call
     *                     has needed it yet, for a change that holds for calls to come
     */
    private void change(StoreChange change, boolean makeFallback) {
        try {
            change.on(store);
        } catch (RuntimeException e) {
            if (!isOutage.test(e)) {
                throw e;
            }
            changedLocally(e, change, makeFallback);
        }
    }

    /** {@link #change} without blocking; {@code locally} makes the change on the local fallback store. */
    private CompletionStage<Void> changeAsync(Function<RateLimitStore, CompletionStage<Void>> change,
                                              StoreChange locally, boolean makeFallback) {
        CompletionStage<Void> changed;
        try {
            changed = change.apply(store);
        } catch (RuntimeException e) {
            changed = CompletableFuture.failedFuture(e);
        }
        return changed.exceptionallyCompose(failure -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (!(cause instanceof RuntimeException e) || !isOutage.test(e)) {
                return CompletableFuture.failedFuture(cause);
            }
            changedLocally(e, locally, makeFallback);
            return CompletableFuture.completedFuture(null);
        });
    }

    private void changedLocally(RuntimeException failure, StoreChange change, boolean makeFallback) {
        for (RateLimitListener listener : listeners) {
            listener.onStoreFailure(this, failure);
        }
        if (onStoreFailure == FailurePolicy.LOCAL_FALLBACK) {
            RateLimitStore local = makeFallback ? fallbackStore() : fallbackStore;
            if (local != null) {
                change.on(local);
            }
        }
    }

    /** A change of what a store holds for a key, outside a decision. */
    @FunctionalInterface
    private interface StoreChange {
        void on(RateLimitStore store);
    }

    /**
     * Replaces the default tiers, from the next call on. Counts are kept wherever a new tier has
     * the algorithm and window of an old one: raising a limit mid-window admits the difference,
     * lowering it admits no more than the new figure.
     *
     * @param tiers the new tiers
     * @throws IllegalArgumentException when they are invalid, smaller than this limiter's cost,
     *         or not supported by its store; the limiter is then unchanged
     */
    public void changeTiers(List<Tier> tiers) {
        synchronized (this) {
            Limits current = limits;
            limits = checked(new Limits(tiers, current.plansAsLists()));
        }
        changes.incrementAndGet();
    }

    /**
     * Adds a plan, or replaces its tiers, from the next call on; counts are kept as
     * {@link #changeTiers(List)} keeps them.
     *
     * @param plan  the plan's name
     * @param tiers its tiers
     * @throws IllegalArgumentException when they are invalid; the limiter is then unchanged
     */
    public void changeTiers(String plan, List<Tier> tiers) {
        Checks.name(plan);
        synchronized (this) {
            Limits current = limits;
            Map<String, List<Tier>> plans = new LinkedHashMap<>(current.plansAsLists());
            plans.put(plan, tiers);
            limits = checked(new Limits(current.defaults.list, plans));
        }
        changes.incrementAndGet();
    }

    /**
     * Replaces every plan, from the next call on: plans not in {@code plans} are gone, and their
     * calls are decided by the default tiers.
     *
     * @param plans the tiers of each plan, by name
     * @throws IllegalArgumentException when a plan's tiers are invalid; the limiter is then unchanged
     */
    public void changePlans(Map<String, List<Tier>> plans) {
        synchronized (this) {
            limits = checked(new Limits(limits.defaults.list, plans));
        }
        changes.incrementAndGet();
    }

    /**
     * Replaces the default tiers and every plan at once, from the next call on: no call sees one
     * without the other.
     *
     * @param tiers the default tiers
     * @param plans the tiers of each plan, by name; plans not in it are gone
     * @throws IllegalArgumentException when any tiers are invalid; the limiter is then unchanged
     */
    public void changeLimits(List<Tier> tiers, Map<String, List<Tier>> plans) {
        synchronized (this) {
            limits = checked(new Limits(tiers, plans));
        }
        changes.incrementAndGet();
    }

    private Limits checked(Limits changed) {
        check(store, onStoreFailure == FailurePolicy.LOCAL_FALLBACK ? fallbackStore : null, changed, cost);
        if (changed.holdsPermits) {
            everHeld = true;
        }
        return changed;
    }

    /**
     * Checks tiers as every store checks a call's, with this limiter's cost, and whether the
     * stores support them.
     */
    private static void check(RateLimitStore store, @Nullable RateLimitStore fallbackStore, Limits limits,
                              long cost) {
        try {
            for (TierSet tiers : limits.all()) {
                RateLimitStore.check(store, "", tiers.list, cost);
                if (fallbackStore != null) {
                    RateLimitStore.check(fallbackStore, "", tiers.list, cost);
                }
            }
        } catch (UnsupportedOperationException e) {
            throw new IllegalArgumentException(e.getMessage() + ": use tiers the store supports, or a store that"
                    + " supports this one", e);
        }
    }

    private String storeKey(String key) {
        return namespace + Objects.requireNonNull(key, "key");
    }

    /**
     * The limiter's name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The default tiers: those every call must pass unless its plan has others.
     *
     * @return the tiers, unmodifiable
     */
    public List<Tier> tiers() {
        return limits.defaults.list;
    }

    /**
     * The plans, each with the tiers that replace the default ones for its calls.
     *
     * @return the tiers by plan name, unmodifiable, in the order the plans were given
     */
    public Map<String, List<Tier>> plans() {
        return limits.plansAsLists();
    }

    /**
     * What a call that does not fit does.
     *
     * @return the behaviour on limit
     */
    public OnLimit onLimit() {
        return onLimit;
    }

    /**
     * With {@link OnLimit#WAIT}, the longest a call waits.
     *
     * @return the maximum wait; zero with {@link OnLimit#REJECT}
     */
    public Duration maxWait() {
        return maxWait;
    }

    /**
     * The store deciding this limiter's calls.
     *
     * @return the store
     */
    public RateLimitStore store() {
        return store;
    }

    /**
     * What a call does when the store cannot decide it.
     *
     * @return the failure policy
     */
    public FailurePolicy onStoreFailure() {
        return onStoreFailure;
    }

    @Override
    public String toString() {
        Limits current = limits;
        return "RateLimiter '" + name + "' " + current.defaults.list
                + (current.plans.isEmpty() ? "" : " plans " + current.plansAsLists()) + (onLimit == OnLimit.WAIT ? " waiting up to " + maxWait : "");
    }

    /**
     * The observers of several decorators, or of none, told in turn: outermost first, then
     * innermost first.
     */
    private static final class Observers implements ForwardingRateLimitStore.DecisionObserver {

        private final ForwardingRateLimitStore.DecisionObserver[] observers;

        Observers(List<ForwardingRateLimitStore.DecisionObserver> observers) {
            this.observers = observers.toArray(new ForwardingRateLimitStore.DecisionObserver[0]);
        }

        @Override
        public @Nullable Object deciding() {
            if (observers.length == 0) {
                return null;
            }
            @Nullable Object[] deciding = new Object[observers.length];
            for (int i = 0; i < observers.length; i++) {
                deciding[i] = observers[i].deciding();
            }
            return deciding;
        }

        @Override
        public void decided(@Nullable Object deciding) {
            if (observers.length == 0) {
                return;
            }
            @Nullable Object[] each = (@Nullable Object[]) deciding;
            for (int i = observers.length - 1; i >= 0; i--) {
                observers[i].decided(each[i]);
            }
        }
    }

    /** A set of tiers decided together, with its smallest limit. */
    private static final class TierSet {

        final List<Tier> list;
        /** The rate tiers: those {@link #giveBack} and {@link #recount} concern. */
        final List<Tier> rates;
        /** The concurrency tiers: those whose permits calls hold until {@link #release}. */
        final List<Tier> held;
        final long smallestLimit;
        /** The tier of the smallest limit (of those, the longest window): a rejection's figures when none decided. */
        final @Nullable Tier tightest;

        TierSet(List<Tier> tiers) {
            this.list = List.copyOf(tiers);
            this.rates = list.stream().filter(tier -> !tier.isConcurrency()).toList();
            this.held = list.stream().filter(Tier::isConcurrency).toList();
            this.smallestLimit = list.stream().mapToLong(Tier::limit).min().orElse(0);
            this.tightest = list.stream().min(Comparator.comparingLong(Tier::limit)
                    .thenComparing(Tier::window, Comparator.reverseOrder())).orElse(null);
        }
    }

    /**
     * What a caller is answered: the store's reservation (or, when it failed, the failure
     * policy's decision), or the rejection the limiter made of the store's overload.
     *
     * @param reservation the reservation; a rejection, without delay, for an overload
     * @param overload    what the overloaded store threw; {@code null} when the store decided
     * @param tiers       the tiers that decided it
     * @param asOf        how many changes of the limits and pauses the limiter had seen when it asked
     */
    private record Answer(Reservation reservation, @Nullable StoreOverloadedException overload, TierSet tiers,
                          long asOf) {

        Answer(Reservation reservation, TierSet tiers, long asOf) {
            this(reservation, null, tiers, asOf);
        }

        /** The rejection of a call the overloaded store refused. */
        static Answer overloaded(TierSet tiers, StoreOverloadedException overload) {
            return new Answer(Reservation.now(overloadDecision(tiers, overload)), overload, tiers, 0);
        }

        Decision decision() {
            return reservation.decision();
        }
    }

    /** The default tiers and the plans, as one version. */
    private static final class Limits {

        final TierSet defaults;
        final Map<String, TierSet> plans;
        /** Whether a plan has a concurrency tier. */
        final boolean holdsPermits;

        Limits(List<Tier> defaults, Map<String, List<Tier>> plans) {
            this.defaults = new TierSet(defaults);
            Map<String, TierSet> sets = new LinkedHashMap<>();
            plans.forEach((plan, tiers) -> sets.put(Objects.requireNonNull(plan, "plan"), new TierSet(tiers)));
            this.plans = Collections.unmodifiableMap(sets);
            this.holdsPermits = all().stream().anyMatch(tiers -> !tiers.held.isEmpty());
        }

        List<TierSet> all() {
            List<TierSet> all = new ArrayList<>(plans.values());
            all.add(0, defaults);
            return all;
        }

        Map<String, List<Tier>> plansAsLists() {
            Map<String, List<Tier>> lists = new LinkedHashMap<>();
            plans.forEach((plan, tiers) -> lists.put(plan, tiers.list));
            return Collections.unmodifiableMap(lists);
        }

        /** One tier for each algorithm and window any plan counts in. */
        List<Tier> everyWindow() {
            List<Tier> windows = new ArrayList<>();
            for (TierSet tiers : all()) {
                for (Tier tier : tiers.list) {
                    if (windows.stream().noneMatch(tier::sharesStateWith)) {
                        windows.add(tier);
                    }
                }
            }
            return windows;
        }
    }

    /** Configures a {@link RateLimiter}. Not thread-safe; build once and share the limiter. */
    public static final class Builder {

        private @Nullable String name;
        private @Nullable RateLimitStore store;
        private final List<Tier> tiers = new ArrayList<>();
        private final Map<String, List<Tier>> plans = new LinkedHashMap<>();
        private long cost = 1;
        private OnLimit onLimit = OnLimit.REJECT;
        private Duration maxWait = Duration.ZERO;
        private String message = "";
        private InstantSource clock = MonotonicClock.system();
        private Sleeper sleeper = Sleeper.system();
        private FailurePolicy onStoreFailure = FailurePolicy.LOCAL_FALLBACK;
        private @Nullable StoreFailureFilter failures;
        private @Nullable RateLimitStore fallbackStore;
        private final List<RateLimitListener> listeners = new ArrayList<>();
        private @Nullable RateLimiterRegistry registry;

        private Builder() {
        }

        /** A builder with a registry's defaults, whose limiter is registered there when built. */
        Builder(RateLimiterRegistry registry) {
            this.registry = registry;
        }

        /**
         * Takes everything a definition says: name, tiers, plans, fixed cost, behaviour on
         * limit, wait, message and, when it gives one, failure policy. Its key, cost and plan
         * expressions are the caller's to evaluate.
         *
         * @param definition the definition
         * @return this builder
         */
        public Builder definition(LimitDefinition definition) {
            name(definition.name());
            tiers(definition.tiers());
            plans(definition.plans());
            if (definition.fixedCost() != null) {
                cost(definition.fixedCost());
            }
            onLimit(definition.onLimit());
            maxWait(definition.maxWait());
            message(definition.message());
            if (definition.onStoreFailure() != null) {
                onStoreFailure(definition.onStoreFailure());
            }
            return this;
        }

        /**
         * The limiter's name: part of every stored key, the metric tag and the policy name in
         * rate-limit headers. Required. Because the {@code RateLimit-Policy} and {@code RateLimit}
         * headers carry it as an RFC 9651 string, it is printable ASCII only ({@code U+0020} to
         * {@code U+007E}): no line breaks or other control characters, no letters beyond ASCII.
         *
         * @param name not blank, printable ASCII
         * @return this builder
         * @throws IllegalArgumentException when the name has a character an RFC 9651 string
         *         cannot carry
         */
        public Builder name(String name) {
            this.name = Checks.name(name);
            return this;
        }

        /**
         * Where counts are kept. Required, unless the builder comes from a
         * {@linkplain RateLimiterRegistry#limiterBuilder() registry}, which gives the store it
         * {@linkplain RateLimiterRegistry#storeOf(String) has for the limiter's name}.
         *
         * @param store the store, for example {@link InMemoryRateLimitStore}
         * @return this builder
         */
        public Builder store(RateLimitStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * Adds a tier; every call must pass all of them.
         *
         * @param tier the tier
         * @return this builder
         */
        public Builder tier(Tier tier) {
            tiers.add(Objects.requireNonNull(tier, "tier"));
            return this;
        }

        /**
         * Replaces the tiers.
         *
         * @param tiers the tiers, at least one when the limiter is built
         * @return this builder
         */
        public Builder tiers(List<Tier> tiers) {
            this.tiers.clear();
            tiers.forEach(this::tier);
            return this;
        }

        /**
         * Adds a plan: tiers that replace the default ones for calls made under the plan.
         *
         * @param plan  the plan's name
         * @param tiers its tiers
         * @return this builder
         */
        public Builder plan(String plan, List<Tier> tiers) {
            plans.put(Checks.name(plan), List.copyOf(tiers));
            return this;
        }

        /**
         * Replaces the plans.
         *
         * @param plans the tiers of each plan, by name
         * @return this builder
         */
        public Builder plans(Map<String, List<Tier>> plans) {
            this.plans.clear();
            plans.forEach(this::plan);
            return this;
        }

        /**
         * The permits a call takes when the caller does not say.
         *
         * @param cost from 1 to the smallest limit; default 1
         * @return this builder
         */
        public Builder cost(long cost) {
            this.cost = cost;
            return this;
        }

        /**
         * What a call that does not fit does.
         *
         * @param onLimit default {@link OnLimit#REJECT}
         * @return this builder
         */
        public Builder onLimit(OnLimit onLimit) {
            this.onLimit = Objects.requireNonNull(onLimit, "onLimit");
            return this;
        }

        /**
         * With {@link OnLimit#WAIT}, the longest a call waits before it is rejected. A call
         * that could not fit within it is rejected at once. At most 2<sup>52</sup> ms (about
         * 142,000 years), the bound windows and blocks have too, so that the clock's time plus
         * it is always an {@link Instant}: {@code ChronoUnit.FOREVER.getDuration()} is refused.
         *
         * @param maxWait default zero; at most 2<sup>52</sup> ms
         * @return this builder
         */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
            return this;
        }

        /**
         * The reason carried by {@link RateLimitExceededException}; never put the key in it.
         *
         * @param message default: "Rate limit exceeded"
         * @return this builder
         */
        public Builder message(String message) {
            this.message = Objects.requireNonNull(message, "message");
            return this;
        }

        /**
         * The clock measuring waits against {@code maxWait}. Stores have their own clock.
         *
         * @param clock default the system clock's time at start, counted on by the JVM's monotonic timer
         *              (no step of the system clock reaches it)
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * How waits happen.
         *
         * @param sleeper default {@link Sleeper#system()}
         * @return this builder
         */
        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
            return this;
        }

        /**
         * What a call does when the store cannot decide it (unreachable, too slow, its circuit
         * breaker open).
         *
         * @param onStoreFailure default {@link FailurePolicy#LOCAL_FALLBACK}
         * @return this builder
         */
        public Builder onStoreFailure(FailurePolicy onStoreFailure) {
            this.onStoreFailure = Objects.requireNonNull(onStoreFailure, "onStoreFailure");
            return this;
        }

        /**
         * The exceptions of the store that are outages, and take the failure policy, unless
         * ignored; the others reach the caller. Set on the limiter, these four settings replace
         * what the store's circuit breaker says (see {@link StoreCircuitBreaker.Builder#recordExceptions}).
         * A {@link StoreOverloadedException} is never an outage, even when recorded: the limiter
         * answers it as a rejection.
         *
         * @param classes the exceptions that are outages, with those inheriting from them;
         *                default every {@link Exception}
         * @return this builder
         */
        @SafeVarargs
        public final Builder recordExceptions(Class<? extends Throwable>... classes) {
            this.failures = failures().recordExceptions(classes);
            return this;
        }

        /**
         * Which exceptions of the store are outages, besides {@link #recordExceptions} (either one
         * is enough), unless ignored.
         *
         * @param predicate true for an outage
         * @return this builder
         */
        public Builder recordException(Predicate<Throwable> predicate) {
            this.failures = failures().recordException(predicate);
            return this;
        }

        /**
         * The exceptions of the store that are never outages: they reach the caller.
         * {@link StoreUnavailableException} is always an outage.
         *
         * @param classes the exceptions, with those inheriting from them; default the programming
         *                errors ({@code NullPointerException}, {@code IllegalArgumentException},
         *                {@code IllegalStateException}, {@code UnsupportedOperationException},
         *                {@code ClassCastException}), which the classes given replace
         * @return this builder
         */
        @SafeVarargs
        public final Builder ignoreExceptions(Class<? extends Throwable>... classes) {
            this.failures = failures().ignoreExceptions(classes);
            return this;
        }

        /**
         * Which exceptions of the store are never outages, besides {@link #ignoreExceptions}
         * (either one is enough).
         *
         * @param predicate true for an exception that reaches the caller
         * @return this builder
         */
        public Builder ignoreException(Predicate<Throwable> predicate) {
            this.failures = failures().ignoreException(predicate);
            return this;
        }

        /** Which exceptions are outages, as a registry sets it for its limiters. */
        Builder failures(@Nullable StoreFailureFilter failures) {
            this.failures = failures;
            return this;
        }

        private StoreFailureFilter failures() {
            return failures != null ? failures : StoreFailureFilter.DEFAULT;
        }

        /**
         * The store that decides calls while the limiter's store fails, under
         * {@link FailurePolicy#LOCAL_FALLBACK}. Limiters may share one: keys are qualified by
         * the limiter's name.
         *
         * @param fallbackStore default: an {@link InMemoryRateLimitStore} on this limiter's
         *                      clock, made when first needed
         * @return this builder
         */
        public Builder fallbackStore(RateLimitStore fallbackStore) {
            this.fallbackStore = Objects.requireNonNull(fallbackStore, "fallbackStore");
            return this;
        }

        /**
         * Adds a listener told of every outcome, store failure and wait.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(RateLimitListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Builds the limiter; one from {@link RateLimiterRegistry#limiterBuilder()} is registered
         * there too.
         *
         * @return the limiter
         * @throws IllegalArgumentException when the definition is incomplete or inconsistent,
         *         when its store (or, under {@link FailurePolicy#LOCAL_FALLBACK}, its fallback
         *         store) cannot honour a tier ({@link RateLimitStore#supports}), or when its
         *         registry has a limiter of its name
         */
        public RateLimiter build() {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("a rate limiter needs a name");
            }
            if (store == null && registry != null) {
                store = registry.storeOf(name);
            }
            if (store == null) {
                throw new IllegalArgumentException("rate limiter '" + name + "' needs a store");
            }
            Checks.maxWait(onLimit, maxWait);
            // The tiers, the cost and whether the stores support the tiers: what stores check on every call.
            check(store, onStoreFailure == FailurePolicy.LOCAL_FALLBACK ? fallbackStore : null, new Limits(tiers, plans),
                    cost);
            RateLimiter limiter = new RateLimiter(this);
            if (registry != null) {
                registry.add(limiter, null);
            }
            return limiter;
        }
    }
}
