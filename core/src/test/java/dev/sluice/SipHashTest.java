package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The in-memory store's key hash spreads keys that {@code String.hashCode} makes collide. */
class SipHashTest {

    /** 2^12 keys of "Aa" and "BB" blocks, all with one {@code String.hashCode}. */
    private static Set<String> collidingKeys() {
        Set<String> keys = new HashSet<>();
        for (int index = 0; index < 1 << 12; index++) {
            StringBuilder key = new StringBuilder();
            for (int block = 0; block < 12; block++) {
                key.append((index >> block & 1) == 0 ? "Aa" : "BB");
            }
            keys.add(key.toString());
        }
        return keys;
    }

    @Test
    void keysSharingAStringHashCodeGetHashesOfTheirOwn() {
        Set<String> keys = collidingKeys();
        assertThat(keys.stream().map(String::hashCode).distinct()).hasSize(1);
        SipHash hashes = SipHash.random();

        // 4,096 keys in 2^32 hash codes: a collision or two by chance, never a chain.
        assertThat(keys.stream().map(key -> hashes.hash("limiter:", key)).distinct().count()).isGreaterThan(4_090);
    }

    @Test
    void aStoreKeyHashesAlikeHoweverItIsSplitAndDifferentlyInEachStore() {
        SipHash hashes = SipHash.random();
        assertThat(hashes.hash("limiter:", "+447700900123")).isEqualTo(hashes.hash("", "limiter:+447700900123"))
                .isEqualTo(hashes.hash("limiter:+44", "7700900123"));
        assertThat(hashes.hash("", "")).isNotEqualTo(hashes.hash("", "\0"));

        Set<Integer> hashCodes = new HashSet<>();
        for (int store = 0; store < 8; store++) {
            hashCodes.add(SipHash.random().hash("limiter:", "+447700900123"));
        }
        assertThat(hashCodes).as("secrets drawn per store").hasSizeGreaterThan(1);
    }
}
