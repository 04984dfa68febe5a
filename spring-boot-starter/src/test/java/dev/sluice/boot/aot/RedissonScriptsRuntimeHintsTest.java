package dev.sluice.boot.aot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

class RedissonScriptsRuntimeHintsTest {

    @Test
    void everyScriptTheRedisStoreReadsIsIncluded() {
        RuntimeHints hints = new RuntimeHints();
        new RedissonScriptsRuntimeHints().registerHints(hints, getClass().getClassLoader());

        for (String script : new String[] {"expiry.lua", "decide.lua", "give-back.lua", "pause.lua", "sync.lua"}) {
            assertThat(getClass().getClassLoader().getResource("dev/sluice/redisson/" + script)).as(script).isNotNull();
            assertThat(RuntimeHintsPredicates.resource().forResource("dev/sluice/redisson/" + script))
                    .as(script).accepts(hints);
        }
        assertThat(RuntimeHintsPredicates.resource().forResource("dev/sluice/redisson/RedissonRateLimitStore.class"))
                .rejects(hints);
    }

    @Test
    void springAotFindsTheStartersRegistrars() {
        assertThat(SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class))
                .hasAtLeastOneElementOfType(SluiceRuntimeHints.class)
                .hasAtLeastOneElementOfType(RedissonScriptsRuntimeHints.class);
    }
}
