package dev.sluice.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import org.junit.jupiter.api.Test;

class KeyMaskTest {

    @Test
    void keysAreMaskedByDefaultAndOneKeyHasOneMask() {
        KeyMask mask = KeyMask.of(new SluiceProperties());

        assertThat(mask.masks()).isTrue();
        assertThat(mask.show("+15550100")).matches("hmac:[0-9a-f]{16}").isEqualTo(mask.show("+15550100"))
                .isNotEqualTo(mask.show("+15550101"));
    }

    @Test
    void instancesWithOneSecretShowOneMaskAndTheKeyHashSecretServesWhenNoMaskSecretIsSet() {
        SluiceProperties masked = new SluiceProperties();
        masked.getTopKeys().setMaskSecret("the fleet's shared secret");
        SluiceProperties hashed = new SluiceProperties();
        hashed.getRedis().setKeyHashSecret("the fleet's shared secret");

        assertThat(KeyMask.of(masked).show("+15550100")).isEqualTo(KeyMask.of(masked).show("+15550100"))
                .isEqualTo(KeyMask.of(hashed).show("+15550100"));
        assertThat(KeyMask.of(new SluiceProperties()).show("+15550100"))
                .as("a secret drawn at start-up").isNotEqualTo(KeyMask.of(new SluiceProperties()).show("+15550100"));
    }

    @Test
    void plainKeysAreShownAsTheyAreOnlyWhenConfigured() {
        SluiceProperties properties = new SluiceProperties();
        properties.getTopKeys().setPlainKeys(true);

        KeyMask mask = KeyMask.of(properties);

        assertThat(mask.masks()).isFalse();
        assertThat(mask.show("+15550100")).isEqualTo("+15550100");
    }

    @Test
    void aShortSecretIsRefusedNamingItsProperty() {
        SluiceProperties properties = new SluiceProperties();
        properties.getTopKeys().setMaskSecret("short");

        assertThatExceptionOfType(SluiceConfigurationException.class).isThrownBy(() -> KeyMask.of(properties))
                .withMessage("sluice.top-keys.mask-secret must have at least 16 bytes to mask keys, had 5");
    }
}
