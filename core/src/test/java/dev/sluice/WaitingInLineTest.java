package dev.sluice;

import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.annotation.OnLimit;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Callers waiting for a permit of one key. A store that reserves permits (here, token buckets in
 * memory) answers each caller once with the time its permit is due, in the order they asked. With
 * a store that does not, callers line up: served first come, first served, with only the first in
 * line asking the store, so that many waiters cost the store about two calls a permit (one that
 * finds the next permit not yet there, one that takes it) rather than one per waiter each time
 * they all wake together.
 */
class WaitingInLineTest {

    private final AtomicLong millis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(millis.get());
    private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
    private final AtomicInteger storeCalls = new AtomicInteger();
    /** The in-memory store, counting the calls it is asked, as if it could not reserve. */
    private final RateLimitStore store = new CountingStore(false);
    /** The in-memory store, counting the calls it is asked, reservations included. */
    private final RateLimitStore reserving = new CountingStore(true);
    /** Ten permits a second, one at a time: a permit every 100 ms. */
    private final Tier tenPerSecond = Tier.of(1, ofMillis(100), TOKEN_BUCKET);
    /** How many of the next asks the stores answer only when the test lets their answers go. */
    private final AtomicInteger answersToHold = new AtomicInteger();
    /** The answers held back, in the order they were asked; each goes when completed. */
    private final List<CompletableFuture<Void>> heldAnswers = Collections.synchronizedList(new ArrayList<>());
    /** Answers that reached a blocked caller. */
    private final AtomicInteger answersReceived = new AtomicInteger();
    /** The threads of blocked callers whose permits the store took, in the order it took them. */
    private final List<String> admittedThreads = Collections.synchronizedList(new ArrayList<>());

    @ParameterizedTest(name = "reserved: {0}")
    @ValueSource(booleans = {true, false})
    void asynchronousWaitersAreServedInTheOrderTheyCame(boolean reserved) {
        VirtualTimer timer = new VirtualTimer();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserved ? reserving : store).clock(clock)
                .sleeper(timer).tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        storeCalls.set(0);

        List<Integer> served = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Decision>> calls = acquireOneAfterAnother(limiter, 20, served);
        timer.runUntil(() -> calls.stream().allMatch(CompletableFuture::isDone));

        assertThat(calls).allSatisfy(call -> assertThat(call.join().allowed()).isTrue());
        assertThat(served).as("first come, first served").isSorted().hasSize(20);
        if (reserved) {
            // Each caller asks once, and sleeps until its permit is due.
            assertThat(storeCalls.get()).as("store calls for 20 permits").isEqualTo(20);
            assertThat(timer.mostPending).as("callers sleeping at once").isEqualTo(20);
        } else {
            // The first caller is told to wait and joins; the others find the line and ask nothing until
            // their turn; each turn then takes at most a call that is too early and one that is served.
            assertThat(storeCalls.get()).as("store calls for 20 permits").isLessThanOrEqualTo(1 + 2 * 20);
            assertThat(timer.mostPending).as("callers sleeping at once").isEqualTo(1);
        }
        assertThat(millis.get() - Instant.parse("2300-01-01T00:00:00Z").toEpochMilli()).as("ms to serve them")
                .isEqualTo(2_000);
    }

    @ParameterizedTest(name = "reserved: {0}")
    @ValueSource(booleans = {true, false})
    void blockedWaitersAskTheStoreOnceAPermitWhenItReservesAndAboutTwiceInLine(boolean reserved) throws Exception {
        AtomicInteger sleeping = new AtomicInteger();
        AtomicInteger mostSleeping = new AtomicInteger();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserved ? reserving : store).clock(clock)
                .sleeper(duration -> {
                    mostSleeping.accumulateAndGet(sleeping.incrementAndGet(), Math::max);
                    millis.addAndGet(duration.toMillis());
                    // Stays until another caller sleeps too, or a while has passed: callers that all
                    // slept at once would be seen doing so.
                    for (int i = 0; i < 1_000 && sleeping.get() == 1; i++) {
                        Thread.yield();
                    }
                    sleeping.decrementAndGet();
                })
                .tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        storeCalls.set(0);

        int waiters = 16;
        CountDownLatch done = new CountDownLatch(waiters);
        AtomicInteger admitted = new AtomicInteger();
        for (int i = 0; i < waiters; i++) {
            new Thread(() -> {
                if (limiter.acquire("api").allowed()) {
                    admitted.incrementAndGet();
                }
                done.countDown();
            }).start();
        }

        // Each sleep yields up to a thousand times for another sleeper: seconds on a machine whose cores are busy.
        assertThat(done.await(60, TimeUnit.SECONDS)).as("the waiters served within 60 s").isTrue();
        assertThat(admitted.get()).isEqualTo(waiters);
        if (reserved) {
            assertThat(storeCalls.get()).as("store calls for %d permits", waiters).isEqualTo(waiters);
        } else {
            assertThat(mostSleeping.get()).as("callers sleeping at once").isEqualTo(1);
            // Each caller may ask once on arrival, before it sees the line; then about two calls a turn.
            assertThat(storeCalls.get()).as("store calls for %d permits", waiters).isLessThanOrEqualTo(3 * waiters);
        }
    }

    @ParameterizedTest(name = "reserved: {0}")
    @ValueSource(booleans = {true, false})
    void waitersThatCannotBeServedWithinMaxWaitAreRejectedAndTakeNothing(boolean reserved) {
        VirtualTimer timer = new VirtualTimer();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserved ? reserving : store).clock(clock)
                .sleeper(timer).tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofMillis(350)).build();
        limiter.acquire("api");

        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            calls.add(limiter.acquireAsync("api").toCompletableFuture());
        }
        timer.runUntil(() -> calls.stream().allMatch(CompletableFuture::isDone));

        assertThat(calls.subList(0, 3)).allSatisfy(call -> assertThat(call.join().allowed()).isTrue());
        assertThat(calls.subList(3, 6)).allSatisfy(call -> assertThatThrownBy(call::join)
                .isInstanceOf(CompletionException.class).hasCauseInstanceOf(RateLimitExceededException.class));
        assertThat(timer.mostPending).as("callers sleeping at once").isEqualTo(reserved ? 3 : 1);
        assertThat(millis.get() - Instant.parse("2300-01-01T00:00:00Z").toEpochMilli()).isEqualTo(300);
        millis.addAndGet(100);
        assertThat(limiter.tryAcquire("api").allowed()).as("the rejected callers took no permit").isTrue();
    }

    @Test
    void asynchronousCallersAreServedInTheOrderTheyCameWhenTheirFirstAnswersComeBackInAnother() {
        VirtualTimer timer = new VirtualTimer();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(store).clock(clock)
                .sleeper(timer).tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        answersToHold.set(3);

        List<Integer> served = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Decision>> calls = acquireOneAfterAnother(limiter, 3, served);
        assertThat(heldAnswers).as("no one was told to wait yet: each asked on arrival").hasSize(3);
        // Each is told to wait, the last to ask first.
        for (int i = 2; i >= 0; i--) {
            heldAnswers.get(i).complete(null);
        }
        timer.runUntil(() -> calls.stream().allMatch(CompletableFuture::isDone));

        assertThat(calls).allSatisfy(call -> assertThat(call.join().allowed()).isTrue());
        assertThat(served).as("first come, first served").containsExactly(0, 1, 2);
    }

    @Test
    void blockedCallersAreServedInTheOrderTheyCameWhenTheirFirstAnswersComeBackInAnother() throws Exception {
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(store).clock(clock)
                .sleeper(duration -> millis.addAndGet(duration.toMillis()))
                .tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        answersToHold.set(2);

        admittedThreads.clear();
        Thread first = new Thread(() -> limiter.acquire("api"), "first");
        first.start();
        awaitCondition(() -> heldAnswers.size() == 1);
        Thread second = new Thread(() -> limiter.acquire("api"), "second");
        second.start();
        awaitCondition(() -> heldAnswers.size() == 2);
        int received = answersReceived.get();
        heldAnswers.get(1).complete(null);
        // Told to wait, the second waits for the first, which asked before it and has had no answer yet.
        awaitCondition(() -> answersReceived.get() > received && second.getState() == Thread.State.WAITING);
        heldAnswers.get(0).complete(null);
        first.join(10_000);
        second.join(10_000);

        assertThat(admittedThreads).as("first come, first served").containsExactly("first", "second");
    }

    @Test
    void aCallerInterruptedInLineIsRejectedAndTheLineMovesOn() throws Exception {
        CountDownLatch firstSleeps = new CountDownLatch(1);
        CountDownLatch wakeFirst = new CountDownLatch(1);
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(store).clock(clock)
                .sleeper(duration -> {
                    firstSleeps.countDown();
                    wakeFirst.await();
                    millis.addAndGet(duration.toMillis());
                })
                .tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");

        CompletableFuture<Decision> first = CompletableFuture.supplyAsync(() -> limiter.acquire("api"));
        assertThat(firstSleeps.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Throwable> interrupted = new CompletableFuture<>();
        Thread second = new Thread(() -> {
            try {
                limiter.acquire("api");
                interrupted.complete(null);
            } catch (RateLimitExceededException e) {
                interrupted.complete(Thread.currentThread().isInterrupted() ? e : new AssertionError("flag lost"));
            }
        });
        second.start();
        awaitCondition(() -> second.getState() == Thread.State.WAITING);
        second.interrupt();

        assertThat(interrupted.get(10, TimeUnit.SECONDS)).isInstanceOf(RateLimitExceededException.class);
        wakeFirst.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS).allowed()).isTrue();
        assertThat(limiter.tryAcquire("api").allowed()).as("the line is gone, and the bucket empty").isFalse();
    }

    @Test
    void aCallerInterruptedBeforeItsPermitIsDueIsRejectedAndThePermitStaysTaken() {
        AtomicInteger sleeps = new AtomicInteger();
        List<Duration> slept = Collections.synchronizedList(new ArrayList<>());
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserving).clock(clock)
                .sleeper(duration -> {
                    slept.add(duration);
                    if (sleeps.incrementAndGet() == 1) {
                        throw new InterruptedException();
                    }
                })
                .tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");

        assertThatThrownBy(() -> limiter.acquire("api")).isInstanceOfSatisfying(RateLimitExceededException.class,
                e -> assertThat(e.retryAfter()).isEqualTo(ofMillis(100)));
        assertThat(Thread.interrupted()).as("the interrupt flag, set again").isTrue();
        assertThat(limiter.acquire("api").allowed()).isTrue();
        assertThat(slept).as("the second caller's permit is due after the first's").containsExactly(ofMillis(100),
                ofMillis(200));
    }

    @Test
    void asynchronousCallersHoldingReservedPermitsObeyAPauseThatComesWhileTheyWait() {
        VirtualTimer timer = new VirtualTimer();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserving).clock(clock)
                .sleeper(timer).tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        List<Long> admittedAt = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Decision>> calls = acquireOneAfterAnother(limiter, 10, admittedAt);
        assertThat(timer.pending()).as("callers holding a permit, due 100 ms apart").isEqualTo(10);

        long pausedAt = millis.get();
        limiter.pause("api", null, ofSeconds(3));
        timer.runUntil(() -> calls.stream().allMatch(CompletableFuture::isDone));

        assertThat(calls).allSatisfy(call -> assertThat(call.join().allowed()).isTrue());
        assertThat(admittedAt).as("ms from the pause to each admission")
                .allSatisfy(at -> assertThat(at - pausedAt).isGreaterThanOrEqualTo(3_000));
    }

    @ParameterizedTest(name = "reserved: {0}")
    @ValueSource(booleans = {true, false})
    void asynchronousWaitersObeyALowerLimitThatComesWhileTheyWait(boolean reserved) {
        VirtualTimer timer = new VirtualTimer();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserved ? reserving : store).clock(clock)
                .sleeper(timer).tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        List<Long> admittedAt = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Decision>> calls = acquireOneAfterAnother(limiter, 6, admittedAt);

        limiter.changeTiers(List.of(Tier.of(1, ofMillis(500), TOKEN_BUCKET)));
        timer.runUntil(() -> calls.stream().allMatch(CompletableFuture::isDone));

        assertThat(calls).allSatisfy(call -> assertThat(call.join().allowed()).isTrue());
        for (int i = 1; i < admittedAt.size(); i++) {
            assertThat(admittedAt.get(i) - admittedAt.get(i - 1)).as("ms between admissions %d and %d", i, i + 1)
                    .isGreaterThanOrEqualTo(500);
        }
    }

    @Test
    void aBlockedCallerHoldingAReservedPermitObeysAPauseThatComesWhileItSleeps() {
        AtomicReference<RateLimiter> paused = new AtomicReference<>();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserving).clock(clock)
                .sleeper(duration -> {
                    // The partner's "come back in 3 s" arrives while the caller sleeps.
                    RateLimiter pausing = paused.getAndSet(null);
                    if (pausing != null) {
                        pausing.pause("api", null, ofSeconds(3));
                    }
                    millis.addAndGet(duration.toMillis());
                })
                .tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        paused.set(limiter);
        long asked = millis.get();

        assertThat(limiter.acquire("api").allowed()).isTrue();

        assertThat(millis.get() - asked).as("ms until the caller was admitted").isGreaterThanOrEqualTo(3_000);
    }

    @Test
    void aBlockedCallerInLineAsksWithTheLowerLimitThatCameWhileItSlept() {
        Tier threePerSecond = Tier.of(3, ofSeconds(1), SLIDING_LOG);
        AtomicReference<RateLimiter> lowered = new AtomicReference<>();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(store).clock(clock)
                .sleeper(duration -> {
                    RateLimiter lowering = lowered.getAndSet(null);
                    if (lowering != null) {
                        lowering.changeTiers(List.of(Tier.of(2, ofSeconds(1), SLIDING_LOG)));
                    }
                    millis.addAndGet(duration.toMillis());
                })
                .tier(threePerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        long start = millis.get();
        limiter.acquire("api");
        millis.addAndGet(400);
        limiter.acquire("api");
        millis.addAndGet(100);
        limiter.acquire("api");
        millis.addAndGet(100);
        lowered.set(limiter);

        // Three a second would admit it at 1,000 ms, when the first call leaves the log; two, at 1,400 ms.
        assertThat(limiter.acquire("api").allowed()).isTrue();

        assertThat(millis.get() - start).as("ms from the first call to the fourth's admission").isEqualTo(1_400);
    }

    @ParameterizedTest(name = "reserved: {0}")
    @ValueSource(booleans = {true, false})
    void cancelledAsynchronousWaitersLeaveTheLineAndGiveTheirPermitsBack(boolean reserved) {
        VirtualTimer timer = new VirtualTimer();
        RateLimiter limiter = RateLimiter.builder().name("outbound").store(reserved ? reserving : store).clock(clock)
                .sleeper(timer).tier(tenPerSecond).onLimit(OnLimit.WAIT).maxWait(ofSeconds(10)).build();
        limiter.acquire("api");
        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            calls.add(limiter.acquireAsync("api").toCompletableFuture());
        }

        calls.subList(0, 4).forEach(call -> call.cancel(false));
        long cancelledAt = millis.get();
        AtomicLong admittedAt = new AtomicLong();
        CompletableFuture<Decision> next = limiter.acquireAsync("api").toCompletableFuture()
                .whenComplete((decision, failure) -> admittedAt.set(millis.get()));
        timer.runUntil(() -> next.isDone() && calls.get(4).isDone());

        assertThat(calls.get(4).join().allowed()).isTrue();
        assertThat(next.join().allowed()).isTrue();
        // Behind the four cancelled callers, it would have waited 600 ms.
        assertThat(admittedAt.get() - cancelledAt).as("ms until the next caller was admitted").isEqualTo(200);
    }

    /**
     * Asynchronous callers asking for a permit of one key, one after another from this thread;
     * each adds the test clock's time to {@code admittedAt} when it is admitted.
     */
    private List<CompletableFuture<Decision>> acquireOneAfterAnother(RateLimiter limiter, int callers,
                                                                    Collection<Long> admittedAt) {
        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            calls.add(limiter.acquireAsync("api").toCompletableFuture()
                    .whenComplete((decision, failure) -> admittedAt.add(millis.get())));
        }
        return calls;
    }

    /**
     * Asynchronous callers asking for a permit of one key, one after another from this thread;
     * each adds its number, from 0, to {@code served} when it hears.
     */
    private static List<CompletableFuture<Decision>> acquireOneAfterAnother(RateLimiter limiter, int callers,
                                                                           List<Integer> served) {
        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            int caller = i;
            calls.add(limiter.acquireAsync("api").toCompletableFuture().whenComplete((decision, failure) -> served.add(caller)));
        }
        return calls;
    }

    /** Lets an answer go at once, or, while answers are to be held, when the test completes it. */
    private CompletableFuture<Void> answerGoes() {
        if (answersToHold.getAndUpdate(held -> Math.max(0, held - 1)) == 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> goes = new CompletableFuture<>();
        heldAnswers.add(goes);
        return goes;
    }

    /**
     * Asks the in-memory store and counts every call; an ask is decided at once, its answer may be
     * held back. What is not a decision (giving back, pausing) goes to the in-memory store as it is.
     */
    private final class CountingStore extends ForwardingRateLimitStore {

        private final boolean reserves;

        CountingStore(boolean reserves) {
            super(memory);
            this.reserves = reserves;
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            storeCalls.incrementAndGet();
            return memory.tryAcquire(key, tiers, cost);
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            storeCalls.incrementAndGet();
            return memory.tryAcquireAsync(key, tiers, cost);
        }

        @Override
        public Reservation reserve(String key, List<Tier> tiers, long cost, Duration maxWait) {
            storeCalls.incrementAndGet();
            Reservation answer = reserves ? memory.reserve(key, tiers, cost, maxWait)
                    : Reservation.now(memory.tryAcquire(key, tiers, cost));
            if (answer.decision().allowed()) {
                admittedThreads.add(Thread.currentThread().getName());
            }
            answerGoes().join();
            answersReceived.incrementAndGet();
            return answer;
        }

        @Override
        public CompletionStage<Reservation> reserveAsync(String key, List<Tier> tiers, long cost, Duration maxWait) {
            storeCalls.incrementAndGet();
            CompletionStage<Reservation> answer = reserves ? memory.reserveAsync(key, tiers, cost, maxWait)
                    : memory.tryAcquireAsync(key, tiers, cost).thenApply(Reservation::now);
            return answerGoes().thenCompose(goes -> answer);
        }
    }

    private static void awaitCondition(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 10 s for a condition").isLessThan(deadline);
            Thread.yield();
        }
    }

    /**
     * Asynchronous sleeps on the test clock: each completes when the test moves the clock to its
     * end, earliest first, as a real timer would in real time.
     */
    private final class VirtualTimer implements Sleeper {

        private final PriorityQueue<Sleep> pending = new PriorityQueue<>();
        int mostPending;

        private record Sleep(long until, CompletableFuture<Void> done) implements Comparable<Sleep> {
            @Override
            public int compareTo(Sleep other) {
                return Long.compare(until, other.until);
            }
        }

        @Override
        public void sleep(Duration duration) {
            throw new AssertionError("an asynchronous caller blocked");
        }

        @Override
        public synchronized CompletionStage<Void> sleepAsync(Duration duration) {
            Sleep sleep = new Sleep(millis.get() + duration.toMillis(), new CompletableFuture<>());
            pending.add(sleep);
            mostPending = Math.max(mostPending, pending.size());
            return sleep.done;
        }

        private synchronized Sleep next() {
            return pending.poll();
        }

        synchronized int pending() {
            return pending.size();
        }

        /** Moves time sleep by sleep, letting the callers run in between, until the condition holds. */
        void runUntil(BooleanSupplier condition) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!condition.getAsBoolean()) {
                assertThat(System.nanoTime()).as("callers still waiting after 10 s").isLessThan(deadline);
                Sleep sleep = next();
                if (sleep == null) {
                    // Callers are between sleeps, on other threads.
                    Thread.onSpinWait();
                    continue;
                }
                millis.accumulateAndGet(sleep.until, Math::max);
                sleep.done.complete(null);
            }
        }
    }
}
