package dev.sluice.redisson;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/**
 * The leases of a concurrency tier's permits in Redis, between application instances (each a
 * Redisson client with its own store) on one {@code redis-server}.
 *
 * <p>Promises attacked: a holder that dies, neither renewing nor releasing, keeps its permits no
 * longer than the lease, after which another instance gets them all; a holder whose lease ran
 * out cannot free, by releasing late, the permits another holder took since, nor get them back
 * by renewing; and a call running far longer than the lease keeps its permit, renewed in the
 * background, until it releases it.
 */
@ExtendWith(RedisExtension.class)
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ConcurrencyLeaseTest {

    private static final int PERMITS = 4;

    private final List<RedissonClient> clients = new ArrayList<>();
    private final String key = "lease:" + UUID.randomUUID();

    @AfterEach
    void shutDown() {
        clients.stream().filter(client -> !client.isShutdown()).forEach(RedisClients::shutDown);
    }

    @Test
    void aDeadHoldersPermitsComeFreeOnceItsLeaseRunsOut(RedisServer server) throws Exception {
        Duration lease = Duration.ofSeconds(2);
        List<Tier> tiers = List.of(Tier.concurrency(PERMITS, lease));
        RedissonClient dying = connect(server);
        RedissonRateLimitStore holder = store(dying, null);
        RedissonRateLimitStore other = store(connect(server), null);
        for (int i = 0; i < PERMITS; i++) {
            assertThat(holder.tryAcquire(key, tiers, 1).allowed()).as("the holder's permit %d", i + 1).isTrue();
        }
        assertThat(other.tryAcquire(key, tiers, 1).allowed()).as("another instance while the holder lives").isFalse();
        // Dies once its store renewed the leases (a third of the way through): a renewed lease runs out too.
        long firstEnd = lastLeaseEnd(server);
        long renewedEnd = firstEnd;
        for (long waited = System.nanoTime(); renewedEnd == firstEnd && since(waited).compareTo(lease) < 0; ) {
            Thread.sleep(20);
            renewedEnd = lastLeaseEnd(server);
        }
        assertThat(renewedEnd).as("the end of the holder's last lease, once renewed").isGreaterThan(firstEnd);

        long shuttingDown = System.nanoTime();
        dying.shutdown();
        long died = System.nanoTime();
        assertThat(other.tryAcquire(key, tiers, 1).allowed()).as("another instance just after the holder died")
                .isFalse();
        long left = lastLeaseEnd(server) - server.time().toEpochMilli();

        int taken = 0;
        long giveUp = died + TimeUnit.SECONDS.toNanos(10);
        while (taken < PERMITS && System.nanoTime() - giveUp < 0) {
            if (other.tryAcquire(key, tiers, 1).allowed()) {
                taken++;
            } else {
                Thread.sleep(10);
            }
        }
        Duration freed = since(died);
        System.out.printf("dead holder: client shut down in %d ms, its last lease then ending in %d ms (lease %d ms);"
                + " its %d permits all taken %d ms after the shutdown%n", (died - shuttingDown) / 1_000_000, left,
                lease.toMillis(), PERMITS, freed.toMillis());
        assertThat(taken).as("permits the other instance got within 10 s").isEqualTo(PERMITS);
        assertThat(freed).as("time until all were free").isLessThanOrEqualTo(lease.plusSeconds(1));
        assertThat(other.tryAcquire(key, tiers, 1).allowed()).as("a permit beyond the limit").isFalse();
        giveBack(other, tiers, PERMITS);
    }

    /**
     * Holder A's clock stands still, so that its renewals, which carry its time, never move its
     * leases past their first end; B's clock is past that end. B then finds A's leases over.
     */
    @Test
    void aHolderWhoseLeaseRanOutFreesNoPermitOfAnother(RedisServer server) throws Exception {
        Duration lease = Duration.ofSeconds(3);
        List<Tier> tiers = List.of(Tier.concurrency(PERMITS, lease));
        Instant start = Instant.ofEpochMilli(System.currentTimeMillis());
        MutableClock clockOfA = new MutableClock(start);
        MutableClock clockOfB = new MutableClock(start.plus(lease).plusSeconds(1));
        RedissonRateLimitStore a = store(connect(server), clockOfA);
        RedissonRateLimitStore b = store(connect(server), clockOfB);

        for (int i = 0; i < PERMITS; i++) {
            assertThat(a.tryAcquire(key, tiers, 1).allowed()).as("A's permit %d", i + 1).isTrue();
        }
        for (int i = 0; i < PERMITS; i++) {
            assertThat(b.tryAcquire(key, tiers, 1).allowed()).as("B's permit %d, after A's leases ended", i + 1)
                    .isTrue();
        }
        // A's background renewal runs every lease/3 of real time: it must not bring A's entries back.
        Thread.sleep(lease.toMillis() * 2 / 3);

        giveBack(a, tiers, PERMITS);
        assertThat(b.tryAcquire(key, tiers, 1).allowed()).as("a 5th call, with B's 4 held").isFalse();
        assertThat(a.tryAcquire(key, tiers, 1).allowed()).as("A again, with B's 4 held").isFalse();

        b.giveBack(key, tiers, 1, Duration.ZERO);
        assertThat(b.tryAcquire(key, tiers, 1).allowed()).as("a call once B gave one back").isTrue();
        assertThat(b.tryAcquire(key, tiers, 1).allowed()).as("one more").isFalse();
        giveBack(b, tiers, PERMITS);
    }

    /**
     * One instance: its first call's lease runs out (the store's clock moves past it before any
     * renewal, as when renewals cannot reach Redis), a second call takes the permit, then the first
     * call ends. Its release lets go of its own lease, which Redis no longer holds, not the second
     * call's: another instance is still refused.
     */
    @Test
    void aLateReleaseFreesNoPermitOfACallOfItsOwnInstance(RedisServer server) {
        // Renewed a third of the way through, ten seconds of real time after each call: the test is done before.
        Duration lease = Duration.ofSeconds(30);
        List<Tier> tiers = List.of(Tier.concurrency(1, lease));
        MutableClock clock = new MutableClock(Instant.ofEpochMilli(System.currentTimeMillis()));
        RedissonRateLimitStore instance = store(connect(server), clock);
        RedissonRateLimitStore other = store(connect(server), clock);

        assertThat(instance.tryAcquire(key, tiers, 1).allowed()).as("the first call").isTrue();
        clock.advance(lease.plusSeconds(1));
        assertThat(instance.tryAcquire(key, tiers, 1).allowed()).as("a second call, the first call's lease over")
                .isTrue();

        instance.giveBack(key, tiers, 1, lease.plusSeconds(1));
        assertThat(other.tryAcquire(key, tiers, 1).allowed()).as("another instance, the second call running")
                .isFalse();
        instance.giveBack(key, tiers, 1, Duration.ZERO);
        assertThat(other.tryAcquire(key, tiers, 1).allowed()).as("once the second call ended").isTrue();
        other.giveBack(key, tiers, 1, Duration.ZERO);
    }

    @Test
    void aCallLongerThanTheLeaseKeepsItsPermitUntilReleased(RedisServer server) throws Exception {
        Duration lease = Duration.ofSeconds(1);
        Duration call = Duration.ofSeconds(4);
        RateLimiter holder = limiter(store(connect(server), null), lease);
        RateLimiter other = limiter(store(connect(server), null), lease);

        Instant admitted = Instant.now();
        assertThat(holder.tryAcquire(key).allowed()).as("the long call").isTrue();
        long started = System.nanoTime();
        int rejected = 0;
        while (System.nanoTime() - started < call.toNanos()) {
            assertThat(other.tryAcquire(key).allowed()).as("another call %d ms into the long one",
                    since(started).toMillis()).isFalse();
            rejected++;
            Thread.sleep(50);
        }
        holder.release(key, 1, null, admitted);
        System.out.printf("long call: held %d ms with a lease of %d ms; %d calls of another instance rejected meanwhile%n",
                since(started).toMillis(), lease.toMillis(), rejected);

        assertThat(other.tryAcquire(key).allowed()).as("another call once the long one released").isTrue();
        other.release(key, 1, null, Instant.now());
    }

    private void giveBack(RedissonRateLimitStore store, List<Tier> tiers, int permits) {
        for (int i = 0; i < permits; i++) {
            store.giveBack(key, tiers, 1, Duration.ZERO);
        }
    }

    /** When the latest of the key's leases ends, in ms on the server's clock: the top score of the tier's log. */
    private long lastLeaseEnd(RedisServer server) {
        String[] lines = server.cli("ZRANGE", "sluice:{" + key + "}:cc:log", "-1", "-1", "WITHSCORES").split("\\s+");
        return Math.round(Double.parseDouble(lines[lines.length - 1]));
    }

    private RedissonClient connect(RedisServer server) {
        RedissonClient client = RedisClients.connect(server);
        clients.add(client);
        return client;
    }

    private static RedissonRateLimitStore store(RedissonClient client, MutableClock clock) {
        // Patient: a loaded machine must not turn a slow decision into a failure, nor refuse it as overloaded.
        RedissonRateLimitStore.Builder builder = RedissonRateLimitStore.builder(client).timeout(RedisClients.PATIENT)
                .maxQueueWait(RedisClients.PATIENT);
        return (clock == null ? builder : builder.clock(clock)).build();
    }

    private static RateLimiter limiter(RedissonRateLimitStore store, Duration lease) {
        return RateLimiter.builder().name("long-calls").store(store).tier(Tier.concurrency(1, lease))
                .onStoreFailure(FailurePolicy.FAIL_CLOSED).build();
    }

    private static Duration since(long nanoTime) {
        return Duration.ofNanos(System.nanoTime() - nanoTime);
    }
}
