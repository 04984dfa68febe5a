package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class TopKeysTest {

    private static final Decision REJECTED = new Decision(false, 10, 0, Duration.ofSeconds(30), Duration.ofSeconds(3));
    private static final Decision LAST_TENTH = new Decision(true, 10, 1, Duration.ofSeconds(30), Duration.ZERO);
    private static final Decision FAR_FROM_LIMIT = new Decision(true, 10, 2, Duration.ofSeconds(30), Duration.ZERO);

    @Test
    void aFloodedKeyComesFirstAmongTenThousandOthers() {
        TopKeys top = new TopKeys(8);
        for (int i = 0; i < 10_000; i++) {
            top.record("caller-" + i, REJECTED);
            if (i % 5 == 0) {
                top.record("flooder", REJECTED);
            }
        }

        List<TopKeys.Entry> rejected = top.rejected(3);

        // 2,000 of 12,000 calls: more than 1/8 of them, so Space-Saving must hold it, and no other
        // key's count (true count 1, at most 12,000/8 overstated) can reach it.
        assertThat(rejected).hasSize(3);
        assertThat(rejected.get(0).key()).isEqualTo("flooder");
        assertThat(rejected.get(0).count()).isGreaterThanOrEqualTo(2_000);
        assertThat(rejected.get(0).count() - rejected.get(0).overcount()).isLessThanOrEqualTo(2_000);
        assertThat(top.nearLimit(3)).isEmpty();
    }

    @Test
    void countsAreExactWhileEveryKeyHasACounter() {
        TopKeys top = new TopKeys(4);
        for (int i = 0; i < 5; i++) {
            top.record("a", REJECTED);
        }
        top.record("b", REJECTED);
        top.record("b", REJECTED);
        top.record("c", LAST_TENTH);
        top.record("d", FAR_FROM_LIMIT);

        assertThat(top.rejected(10)).containsExactly(new TopKeys.Entry("a", 5, 0), new TopKeys.Entry("b", 2, 0));
        assertThat(top.nearLimit(10)).containsExactly(new TopKeys.Entry("c", 1, 0));
    }

    @Test
    void aNewKeyTakesTheLeastCountedCounterAndSaysByHowMuchItMayOverstate() {
        TopKeys top = new TopKeys(2);
        top.record("a", REJECTED);
        top.record("a", REJECTED);
        top.record("b", REJECTED);
        top.record("c", REJECTED);

        assertThat(top.rejected(2)).containsExactly(new TopKeys.Entry("a", 2, 0), new TopKeys.Entry("c", 2, 1));
    }

    @Test
    void longKeysAreHeldAsTheirDigestAndStillCountedTogether() {
        TopKeys top = new TopKeys();
        String phone = "+1".repeat(32 * 1024);
        top.record(phone, REJECTED);
        top.record(phone, REJECTED);

        TopKeys.Entry entry = top.rejected(1).get(0);
        assertThat(entry.key()).startsWith("#").hasSize(65);
        assertThat(entry.count()).isEqualTo(2);
    }

    @Test
    void aCapacityBelowOneIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> new TopKeys(0)).withMessageContaining("capacity");
    }
}
