package dev.sluice.redisson;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ServerClockTest {

    private final AtomicLong clientMillis = new AtomicLong(Instant.parse("2300-01-01T00:00:00Z").toEpochMilli());
    private final ServerClock server = new ServerClock(() -> Instant.ofEpochMilli(clientMillis.get()));

    @Test
    void setsNoDeadlineBeforeItHasSeenTheServersTime() {
        assertThat(server.deadline(50)).isEqualTo(ServerClock.NO_DEADLINE);
    }

    @Test
    void takesTheLargestOffsetSeenAsTheOthersArrivedLate() {
        // The server is 1 s ahead; replies arrive 3 ms, 1 ms and 7 ms after the server's time in them.
        for (long late : new long[] {3, 1, 7}) {
            server.sample(clientMillis.get() + 1_000 - late);
        }
        assertThat(server.deadline(50)).isEqualTo(clientMillis.get() + 999 + 50);
    }

    @Test
    void forgetsOffsetsOlderThanTwoWindowsSoThatAClockSetBackIsFollowed() {
        server.sample(clientMillis.get() + 5_000);
        clientMillis.addAndGet(10_000);
        server.sample(clientMillis.get() + 100);
        assertThat(server.deadline(0)).as("the previous window still counts").isEqualTo(clientMillis.get() + 5_000);

        clientMillis.addAndGet(10_000);
        server.sample(clientMillis.get() + 100);
        assertThat(server.deadline(0)).isEqualTo(clientMillis.get() + 100);
    }

    @Test
    void followsAClockSetForwardAtOnce() {
        server.sample(clientMillis.get());
        server.sample(clientMillis.get() + 60_000);
        assertThat(server.deadline(0)).isEqualTo(clientMillis.get() + 60_000);
    }
}
