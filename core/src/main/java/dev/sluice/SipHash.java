package dev.sluice;

import java.security.SecureRandom;

/**
 * SipHash-1-3 of a store key's characters, under a secret key chosen at random for each store:
 * the hash the in-memory store files its keys by. Keys come from requests (a phone number, a
 * header), so they must not be able to share a hash code on purpose: {@code String.hashCode}
 * gives every string made of "Aa" and "BB" blocks the same one, and a flood of such keys would
 * make every lookup walk one long chain. Without the secret key no caller can tell which keys
 * collide. SipHash is what Redis, Python and Rust hash their tables with for the same reason;
 * the JDK has none to call, and Sluice's core depends on nothing that does.
 *
 * <p>The characters of {@code prefix + key} are read four to a 64-bit word, the last word
 * carrying the number of characters, so that different strings are different word sequences.
 */
final class SipHash {

    private static final SecureRandom SEEDS = new SecureRandom();

    private final long k0;
    private final long k1;

    private SipHash(long k0, long k1) {
        this.k0 = k0;
        this.k1 = k1;
    }

    /** A hash under a new random secret key. */
    static SipHash random() {
        return new SipHash(SEEDS.nextLong(), SEEDS.nextLong());
    }

    /** The hash of the string {@code prefix + key}, without making it. */
    int hash(String prefix, String key) {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        int split = prefix.length();
        int length = split + key.length();
        int words = length / 4 + 1;
        long word = 0;
        // A compression round for each word, then three finalization rounds.
        for (int round = 0; round < words + 3; round++) {
            if (round < words) {
                word = round == words - 1 ? (long) length << 48 : 0;
                for (int i = 4 * round, end = Math.min(i + 4, length); i < end; i++) {
                    char c = i < split ? prefix.charAt(i) : key.charAt(i - split);
                    word |= (long) c << ((i & 3) << 4);
                }
                v3 ^= word;
            } else if (round == words) {
                v2 ^= 0xff;
            }
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            if (round < words) {
                v0 ^= word;
            }
        }
        long h = v0 ^ v1 ^ v2 ^ v3;
        return (int) (h ^ (h >>> 32));
    }
}
