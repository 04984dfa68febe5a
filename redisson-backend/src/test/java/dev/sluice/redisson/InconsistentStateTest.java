package dev.sluice.redisson;

import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Tier;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

/**
 * States a real deployment reaches without the scripts' doing: {@code maxmemory} evicting one
 * key of a sliding log's pair, an operator deleting one, a partial restore. The scripts repair
 * them from the log, the truth of a sliding log, and never loop on them: on a server of this
 * test's own that answers {@code BUSY} once a script runs for 100 ms, every decision returns
 * within the store's timeout and the server answers others.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class InconsistentStateTest {

    private static final Duration TIMEOUT = ofSeconds(2);

    private final MutableClock clock = new MutableClock(Instant.parse("2100-01-01T00:00:00Z"));
    private final Tier fivePerTenSeconds = Tier.of(5, ofSeconds(10), SLIDING_LOG);
    private final String key = "inconsistent:" + UUID.randomUUID();
    private final String tierKey = "sluice:{" + key + "}:sl10000";
    private RedisServer server;
    private RedissonClient client;
    private RedissonRateLimitStore store;

    @BeforeEach
    void start() {
        server = RedisServer.start(List.of("--busy-reply-threshold", "100"));
        client = RedisClients.connect(server);
        store = RedissonRateLimitStore.builder(client).clock(clock).timeout(TIMEOUT).build();
    }

    @AfterEach
    void stop() {
        RedisClients.shutDown(client);
        server.close();
    }

    private Decision acquire() {
        return store.tryAcquire(key, List.of(fivePerTenSeconds), 1);
    }

    private Decision admitted(long remaining, long resetAfterMillis) {
        return new Decision(true, 5, remaining, Duration.ofMillis(resetAfterMillis), Duration.ZERO,
                fivePerTenSeconds.window());
    }

    private Decision rejected(long resetAfterMillis, long retryAfterMillis) {
        return new Decision(false, 5, 0, Duration.ofMillis(resetAfterMillis), Duration.ofMillis(retryAfterMillis),
                fivePerTenSeconds.window());
    }

    @Test
    void aFullTierWhoseLogWasDeletedAdmitsExactlyItsLimitAgain() {
        for (int call = 0; call < 5; call++) {
            assertThat(acquire().allowed()).isTrue();
        }
        assertThat(acquire().allowed()).isFalse();
        server.cli("DEL", tierKey + ":log");

        clock.advance(ofSeconds(1));
        for (int remaining = 4; remaining >= 0; remaining--) {
            assertThat(acquire()).isEqualTo(admitted(remaining, 10_000));
        }
        assertThat(acquire()).isEqualTo(rejected(10_000, 10_000));
        assertThat(server.cli("PING")).isEqualTo("PONG");
    }

    @Test
    void aTierWhoseHashWasDeletedStillRejectsAsItsLogSays() {
        Instant start = clock.instant();
        acquire();
        acquire();
        clock.advance(ofSeconds(1));
        acquire();
        acquire();
        acquire();
        server.cli("DEL", tierKey);

        clock.advance(ofSeconds(1));
        // The two oldest permits leave 10 s after they came, and one of them makes room.
        assertThat(acquire()).isEqualTo(rejected(9_000, 8_000));
        clock.set(start.plus(ofSeconds(10)));
        assertThat(acquire()).isEqualTo(admitted(1, 10_000));
        assertThat(acquire()).isEqualTo(admitted(0, 10_000));
        assertThat(acquire()).isEqualTo(rejected(10_000, 1_000));
        assertThat(server.cli("PING")).isEqualTo("PONG");
    }

    @Test
    void aGiveBackFindsTheCallInTheLogWhenTheHashWasDeleted() {
        for (int call = 0; call < 5; call++) {
            assertThat(acquire().allowed()).isTrue();
            clock.advance(ofSeconds(1));
        }
        server.cli("DEL", tierKey);

        store.giveBack(key, List.of(fivePerTenSeconds), 1, ofSeconds(1));
        assertThat(server.cli("ZCARD", tierKey + ":log")).isEqualTo("4");
        // The four entries left, the oldest 5 s old: one call fits, and the next waits for it to leave.
        assertThat(acquire()).isEqualTo(admitted(0, 10_000));
        assertThat(acquire()).isEqualTo(rejected(10_000, 5_000));
        assertThat(server.cli("PING")).isEqualTo("PONG");
    }

    @Test
    void aGiveBackOnALogDeletedApartFromItsHashGivesNothingBackAndChangesNothing() {
        for (int call = 0; call < 5; call++) {
            assertThat(acquire().allowed()).isTrue();
        }
        String state = server.cli("HGET", tierKey, "v");
        server.cli("DEL", tierKey + ":log");

        store.giveBack(key, List.of(fivePerTenSeconds), 1, Duration.ZERO);
        assertThat(server.cli("HGET", tierKey, "v")).as("the hash, untouched").isEqualTo(state);
        assertThat(server.cli("EXISTS", tierKey + ":log")).isEqualTo("0");
        assertThat(server.cli("PING")).isEqualTo("PONG");
    }

    @Test
    void aTierRestoredApartFromItsLogIsCountedAgainFromTheLog() {
        for (int call = 0; call < 3; call++) {
            assertThat(acquire().allowed()).isTrue();
        }
        // As a partial restore leaves it: the hash from when the tier was full (five permits in
        // five entries, which its counters s and p say), beside a later log of three.
        server.cli("EVAL", """
                local v = redis.call('HGET', KEYS[1], 'v')
                local t, b, s, n, p, e = struct.unpack('<dddddd', v)
                redis.call('HSET', KEYS[1], 'v', struct.pack('<dddddd', t, b, 5, 5, 5, e))""", "1", tierKey);

        assertThat(acquire()).isEqualTo(admitted(1, 10_000));
        assertThat(acquire()).isEqualTo(admitted(0, 10_000));
        assertThat(acquire()).isEqualTo(rejected(10_000, 10_000));
        assertThat(server.cli("PING")).isEqualTo("PONG");
    }
}
