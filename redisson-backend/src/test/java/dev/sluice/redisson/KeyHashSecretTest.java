package dev.sluice.redisson;

import static dev.sluice.annotation.Algorithm.FIXED_WINDOW;
import static dev.sluice.annotation.Algorithm.SLIDING_LOG;
import static dev.sluice.annotation.Algorithm.SLIDING_WINDOW;
import static dev.sluice.annotation.Algorithm.TOKEN_BUCKET;
import static java.time.Duration.ofMinutes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.redisson.testing.RedisClients;
import dev.sluice.redisson.testing.RedisCluster;
import dev.sluice.redisson.testing.RedisExtension;
import dev.sluice.redisson.testing.RedisServer;
import dev.sluice.tck.MutableClock;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/**
 * With a key hash secret no caller's key reaches Redis in clear, while instances sharing the
 * secret still share the counts.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KeyHashSecretTest {

    private static final String PHONE = "otp-phone:+447700900123";
    private static final String SECRET = "correct horse battery staple";
    private static final List<Tier> OTP = List.of(Tier.of(3, ofMinutes(1), FIXED_WINDOW).withBlockFor(ofMinutes(15)),
            Tier.of(10, ofMinutes(60), SLIDING_WINDOW), Tier.of(10, ofMinutes(10), SLIDING_LOG),
            Tier.of(10, ofMinutes(5), TOKEN_BUCKET));
    private static final List<Tier> BUCKET = List.of(Tier.of(3, ofMinutes(1), TOKEN_BUCKET));

    private final MutableClock clock = new MutableClock(Instant.parse("2200-01-01T00:00:00Z"));
    private RedisServer server;
    private RedissonClient client;
    private RedissonClient otherInstance;

    @BeforeAll
    void connect(RedisServer server) {
        this.server = server;
        this.client = RedisClients.connect(server);
        this.otherInstance = RedisClients.connect(server);
    }

    @AfterAll
    void disconnect() {
        client.shutdown();
        otherInstance.shutdown();
    }

    @BeforeEach
    void emptyRedis() {
        server.flushAll();
    }

    private RedissonRateLimitStore luaStore(RedissonClient redisson, String secret) {
        return RedissonRateLimitStore.builder(redisson).clock(clock).timeout(RedisClients.PATIENT)
                .keyHashSecret(secret).build();
    }

    private Bucket4jRedissonStore bucket4jStore(RedissonClient redisson, String secret) {
        return Bucket4jRedissonStore.builder(redisson).clock(clock).timeout(RedisClients.PATIENT)
                .keyHashSecret(secret).build();
    }

    /** Every key in Redis, found as an operator browsing it would. */
    private List<String> keysInRedis() {
        return Arrays.stream(server.cli("--scan").split("\\s+")).filter(key -> !key.isEmpty()).toList();
    }

    private static int admitUntilRejected(RateLimitStore store, List<Tier> tiers) {
        int admitted = 0;
        while (store.tryAcquire(PHONE, tiers, 1).allowed()) {
            admitted++;
        }
        return admitted;
    }

    @Test
    void noPhoneNumberNorLimiterNameReachesRedis() {
        RedissonRateLimitStore store = luaStore(client, SECRET);
        admitUntilRejected(store, OTP);

        assertThat(keysInRedis()).hasSize(5).allSatisfy(key -> assertThat(key)
                .matches("sluice:\\{[0-9a-f]{64}\\}:(fw60000|sw3600000|sl600000|sl600000:log|tb300000)")
                .doesNotContain("447700900123").doesNotContain("otp-phone"));
    }

    @Test
    void withoutASecretTheKeyIsThereInClear() {
        admitUntilRejected(RedissonRateLimitStore.builder(client).clock(clock).timeout(RedisClients.PATIENT).build(),
                OTP);

        assertThat(keysInRedis()).allMatch(key -> key.startsWith("sluice:{" + PHONE + "}:"));
    }

    @Test
    void instancesWithTheSameSecretShareCountsAndBlocks() {
        RedissonRateLimitStore one = luaStore(client, SECRET);
        RedissonRateLimitStore other = luaStore(otherInstance, SECRET);

        assertThat(admitUntilRejected(one, OTP)).isEqualTo(3);
        assertThat(other.tryAcquire(PHONE, OTP, 1).retryAfter()).as("blocked on the other instance")
                .isEqualTo(ofMinutes(15));
    }

    @Test
    void aDifferentSecretCountsApart() {
        assertThat(admitUntilRejected(luaStore(client, SECRET), OTP)).isEqualTo(3);

        assertThat(admitUntilRejected(luaStore(otherInstance, SECRET + " changed"), OTP)).isEqualTo(3);
    }

    @Test
    void aKeyIsResetByItsKeyWhicheverInstanceAsks() {
        RedissonRateLimitStore one = luaStore(client, SECRET);
        admitUntilRejected(one, OTP);

        luaStore(otherInstance, SECRET).reset(PHONE, OTP);

        assertThat(keysInRedis()).isEmpty();
        assertThat(admitUntilRejected(one, OTP)).isEqualTo(3);
    }

    @Test
    void theSecretMayBeGivenAsBytes() {
        RedissonRateLimitStore asText = luaStore(client, SECRET);
        RedissonRateLimitStore asBytes = RedissonRateLimitStore.builder(otherInstance).clock(clock)
                .timeout(RedisClients.PATIENT).keyHashSecret(SECRET.getBytes(StandardCharsets.UTF_8)).build();

        assertThat(admitUntilRejected(asText, OTP)).isEqualTo(3);
        assertThat(asBytes.tryAcquire(PHONE, OTP, 1).allowed()).isFalse();
    }

    @Test
    void bucket4jBucketsAreHashedAndSharedTheSameWay() {
        Bucket4jRedissonStore one = bucket4jStore(client, SECRET);
        assertThat(admitUntilRejected(one, BUCKET)).isEqualTo(3);

        assertThat(keysInRedis()).singleElement().asString().matches("sluice:\\{[0-9a-f]{64}\\}:bucket4j:60000");
        assertThat(bucket4jStore(otherInstance, SECRET).tryAcquire(PHONE, BUCKET, 1).allowed()).isFalse();
        assertThat(bucket4jStore(otherInstance, SECRET + " changed").tryAcquire(PHONE, BUCKET, 1).allowed()).isTrue();

        bucket4jStore(otherInstance, SECRET).reset(PHONE, BUCKET);
        assertThat(admitUntilRejected(one, BUCKET)).isEqualTo(3);
    }

    @Test
    void hashedKeysWorkInAClusterEachStoreKeyInOneSlot(RedisCluster cluster) {
        RedissonClient clusterClient = RedisClients.connect(cluster);
        try {
            cluster.flushAll();
            // A script whose keys were in several slots would fail with CROSSSLOT.
            RedissonRateLimitStore store = luaStore(clusterClient, SECRET);
            for (int i = 0; i < 20; i++) {
                assertThat(store.tryAcquire(PHONE + i, OTP, 1).allowed()).isTrue();
                store.reset(PHONE + i, OTP);
            }
            assertThat(clusterClient.getKeys().count()).isZero();
        } finally {
            RedisClients.shutDown(clusterClient);
        }
    }

    @Test
    void aShortSecretIsRefused() {
        assertThatThrownBy(() -> RedissonRateLimitStore.builder(client).keyHashSecret("too short"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("keyHashSecret must have at least 16 bytes (32 random bytes are best), had 9");
        assertThatThrownBy(() -> Bucket4jRedissonStore.builder(client).keyHashSecret(new byte[15]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("had 15");
    }
}
