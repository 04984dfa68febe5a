package dev.sluice.redisson;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Replaces store keys by their HMAC-SHA-256 under a secret, in hex, so that what callers are
 * counted by (phone numbers, e-mail addresses) never reaches Redis in clear. Thread-safe.
 */
final class KeyHasher {

    /** The shortest secret accepted: a shorter one could be guessed, and with it every key. */
    static final int MIN_SECRET_BYTES = 16;

    private static final String ALGORITHM = "HmacSHA256";

    private final Mac prototype;

    private KeyHasher(byte[] secret) {
        if (secret.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("keyHashSecret must have at least " + MIN_SECRET_BYTES
                    + " bytes (32 random bytes are best), had " + secret.length);
        }
        try {
            prototype = Mac.getInstance(ALGORITHM);
            prototype.init(new SecretKeySpec(secret, ALGORITHM));
            // Fails now, rather than on the first decision, should this JVM's Mac not be cloneable.
            prototype.clone();
        } catch (GeneralSecurityException | CloneNotSupportedException e) {
            throw new IllegalStateException(ALGORITHM + " is not usable in this JVM", e);
        }
    }

    /**
     * A hasher under {@code secret}.
     *
     * @param secret at least {@value #MIN_SECRET_BYTES} bytes; copied
     * @return the hasher
     */
    static KeyHasher of(byte[] secret) {
        return new KeyHasher(Objects.requireNonNull(secret, "keyHashSecret").clone());
    }

    /**
     * A hasher under the UTF-8 bytes of {@code secret}.
     *
     * @param secret at least {@value #MIN_SECRET_BYTES} bytes in UTF-8
     * @return the hasher
     */
    static KeyHasher of(String secret) {
        return new KeyHasher(Objects.requireNonNull(secret, "keyHashSecret").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The key's HMAC.
     *
     * @param key a store key
     * @return 64 hex digits
     */
    String hash(String key) {
        Mac mac;
        try {
            mac = (Mac) prototype.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
        return HexFormat.of().formatHex(mac.doFinal(key.getBytes(StandardCharsets.UTF_8)));
    }
}
