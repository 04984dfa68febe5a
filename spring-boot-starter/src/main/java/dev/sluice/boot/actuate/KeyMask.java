package dev.sluice.boot.actuate;

import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * How the actuator shows a limiter's keys: masked by default, as {@code hmac:} and the first 16 hex
 * digits of the key's HMAC-SHA-256, so that an operator sees which callers stand out, and can check
 * whether one is a given caller with the secret, without the endpoint handing out phone numbers.
 * Plain only when configured.
 */
final class KeyMask {

    private static final String ALGORITHM = "HmacSHA256";
    private static final int MIN_SECRET_BYTES = 16;

    private final @Nullable SecretKeySpec secret;

    private KeyMask(@Nullable SecretKeySpec secret) {
        this.secret = secret;
    }

    /**
     * The mask {@code sluice.top-keys} and {@code sluice.redis.key-hash-secret} configure.
     *
     * @param properties the settings
     * @return the mask
     * @throws SluiceConfigurationException when the secret is shorter than 16 bytes
     */
    static KeyMask of(SluiceProperties properties) {
        SluiceProperties.TopKeys topKeys = properties.getTopKeys();
        if (topKeys.isPlainKeys()) {
            return new KeyMask(null);
        }
        String property = topKeys.getMaskSecret() != null ? "sluice.top-keys.mask-secret" : "sluice.redis.key-hash-secret";
        String configured = topKeys.getMaskSecret() != null ? topKeys.getMaskSecret()
                : properties.getRedis().getKeyHashSecret();
        byte[] secret;
        if (configured == null) {
            secret = new byte[32];
            new SecureRandom().nextBytes(secret);
        } else {
            secret = configured.getBytes(StandardCharsets.UTF_8);
            if (secret.length < MIN_SECRET_BYTES) {
                throw new SluiceConfigurationException(property + " must have at least " + MIN_SECRET_BYTES
                        + " bytes to mask keys, had " + secret.length,
                        "Set " + property + " to 32 random bytes, the same on every instance.", null);
            }
        }
        return new KeyMask(new SecretKeySpec(secret, ALGORITHM));
    }

    /**
     * Whether keys are shown masked.
     *
     * @return false when shown as they are
     */
    boolean masks() {
        return secret != null;
    }

    /**
     * A key as the endpoint shows it.
     *
     * @param key a key
     * @return the key itself, or {@code hmac:} and 16 hex digits
     */
    String show(String key) {
        if (secret == null) {
            return key;
        }
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(secret);
            byte[] digest = mac.doFinal(key.getBytes(StandardCharsets.UTF_8));
            return "hmac:" + HexFormat.of().formatHex(digest, 0, 8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " is not usable in this JVM", e);
        }
    }
}
