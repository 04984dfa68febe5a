package dev.sluice.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Keys as stores keep them: whatever a caller's key, a store holds at most a few dozen
 * characters for it, so a client sending a megabyte as its phone number cannot fill memory.
 * Distinct keys stay distinct. Shared by Sluice's stores; not API (see the package).
 */
public final class StoreKeys {

    /** The longest key kept as it is. */
    public static final int MAX_RAW_LENGTH = 128;

    private StoreKeys() {
    }

    /**
     * A key of bounded length.
     *
     * @param key a key
     * @return the key itself when it has at most {@value #MAX_RAW_LENGTH} characters and does
     *         not start with {@code #}; otherwise its {@linkplain #digest digest}
     */
    public static String bounded(String key) {
        return key.length() <= MAX_RAW_LENGTH && !key.startsWith("#") ? key : digest(key);
    }

    /**
     * A digest of a key: {@code #} and the SHA-256 of its UTF-8 bytes, in hex. No key kept as
     * it is starts with {@code #}, so a digest never equals one.
     *
     * @param key a key
     * @return 65 characters
     */
    public static String digest(String key) {
        try {
            return "#" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
