package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;
import org.springframework.core.ResolvableType;

/**
 * The configuration metadata the starter jar carries: {@code spring-configuration-metadata.json}
 * as the configuration processor writes it, its generated entries merged with
 * {@code additional-spring-configuration-metadata.json}. IDEs complete and document
 * {@code sluice.*} from it, including the properties inside the {@code sluice.limits} map,
 * which the processor cannot see.
 */
class ConfigurationMetadataTest {

    private static final String LIMIT = "dev.sluice.boot.autoconfigure.SluiceProperties$Limit";

    private static final String TIER = "dev.sluice.boot.autoconfigure.SluiceProperties$TierProperties";

    private static final String RULE = "dev.sluice.boot.autoconfigure.SluiceProperties$Rule";

    private static Map<String, JsonNode> properties;

    private static Map<String, JsonNode> hints;

    @BeforeAll
    static void readMergedMetadata() throws IOException {
        JsonNode metadata = sluiceMetadata();
        properties = byName(metadata.path("properties"));
        hints = byName(metadata.path("hints"));
    }

    @Test
    void describesThePropertiesOfEachLimiter() {
        assertProperty(properties.get("sluice.limits.*.enabled"), "java.lang.Boolean", LIMIT);
        assertThat(properties.get("sluice.limits.*.enabled").path("defaultValue").asBoolean()).isTrue();
        assertProperty(properties.get("sluice.limits.*.tiers"),
                "java.util.List<dev.sluice.boot.autoconfigure.SluiceProperties$TierProperties>", LIMIT);
        assertProperty(properties.get("sluice.limits.*.tiers[*].limit"), "java.lang.Long", TIER);
        assertProperty(properties.get("sluice.limits.*.tiers[*].window"), "java.time.Duration", TIER);
        assertProperty(properties.get("sluice.limits.*.tiers[*].algorithm"), "dev.sluice.annotation.Algorithm", TIER);
        assertProperty(properties.get("sluice.limits.*.tiers[*].count-rejected"), "java.lang.Boolean", TIER);
        assertProperty(properties.get("sluice.limits.*.tiers[*].block-for"), "java.time.Duration", TIER);
        assertThat(properties.get("sluice.limits.*.tiers[*].algorithm").path("defaultValue").asText())
                .isEqualTo("sliding-window");
    }

    @Test
    void describesConditionsAndCountingByOutcome() {
        assertProperty(properties.get("sluice.limits.*.condition"), "java.lang.String", LIMIT);
        assertProperty(properties.get("sluice.http.rules[*].condition"), "java.lang.String", RULE);
        assertProperty(properties.get("sluice.http.rules[*].count-on"), "java.util.List<java.lang.String>", RULE);
        assertThat(properties.get("sluice.http.rules[*].condition").path("description").asText())
                .contains("neither limited nor counted");
        assertThat(properties.get("sluice.http.rules[*].count-on").path("description").asText())
                .contains("401", "4xx");
        assertThat(values(hints.get("sluice.http.rules[*].count-on"))).contains("401", "4xx");
    }

    @Test
    void hintsTheAlgorithmsAndExampleDurations() {
        assertThat(values(hints.get("sluice.limits.*.tiers[*].algorithm")))
                .containsExactly("fixed-window", "sliding-window", "sliding-log", "token-bucket", "concurrency");
        assertThat(values(hints.get("sluice.limits.*.tiers[*].window"))).contains("10s", "1m");
        assertThat(providers(hints.get("sluice.limits.*.tiers[*].window"))).containsExactly("any");
        assertThat(values(hints.get("sluice.limits.*.tiers[*].block-for"))).contains("15m");
        assertThat(values(hints.get("sluice.redis.timeout"))).contains("100ms");
    }

    /**
     * Walks {@link SluiceProperties} as the binder does, through nested objects, lists and maps:
     * a property added there without metadata, or an enum or duration without hints, fails here.
     */
    @Test
    void coversEveryPropertyTheBinderAccepts() {
        Map<String, ResolvableType> bindable = new LinkedHashMap<>();
        collect(SluiceProperties.class, "sluice.", bindable);

        assertThat(properties).containsKeys(bindable.keySet().toArray(String[]::new));
        bindable.forEach((name, type) -> {
            assertThat(properties.get(name).path("description").asText()).as("description of %s", name).isNotBlank();
            Class<?> raw = type.toClass();
            if (raw.isEnum()) {
                assertThat(values(hints.get(name))).as("hints of %s", name)
                        .containsExactlyInAnyOrderElementsOf(Arrays.stream(raw.getEnumConstants())
                                .map(constant -> ((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-'))
                                .toList());
            }
            if (raw == Duration.class) {
                assertThat(values(hints.get(name))).as("example values of %s", name).isNotEmpty();
                assertThat(providers(hints.get(name))).as("providers of %s", name).containsExactly("any");
            }
        });
    }

    @Test
    void hintsOnlyPropertiesThatExist() {
        assertThat(hints.keySet()).allSatisfy(name -> assertThat(properties).containsKey(name));
    }

    private static void assertProperty(@Nullable JsonNode property, String type, String sourceType) {
        assertThat(property).as("property").isNotNull();
        assertThat(property.path("type").asText()).isEqualTo(type);
        assertThat(property.path("sourceType").asText()).isEqualTo(sourceType);
        assertThat(property.path("description").asText()).isNotBlank();
    }

    /** Adds every property the binder accepts under {@code prefix}, nested ones included. */
    private static void collect(Class<?> type, String prefix, Map<String, ResolvableType> bindable) {
        for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
            if (descriptor.getReadMethod() == null || descriptor.getName().equals("class")) {
                continue;
            }
            ResolvableType propertyType = ResolvableType.forMethodReturnType(descriptor.getReadMethod());
            Class<?> raw = propertyType.toClass();
            String name = prefix + kebab(descriptor.getName());
            if (Map.class.isAssignableFrom(raw)) {
                bindable.put(name, propertyType);
                expand(propertyType.getGeneric(1).toClass(), name + ".*.", bindable);
            } else if (Collection.class.isAssignableFrom(raw)) {
                bindable.put(name, propertyType);
                expand(propertyType.getGeneric(0).toClass(), name + "[*].", bindable);
            } else if (isNested(raw)) {
                collect(raw, name + ".", bindable);
            } else if (descriptor.getWriteMethod() != null) {
                bindable.put(name, propertyType);
            }
        }
    }

    private static void expand(Class<?> element, String prefix, Map<String, ResolvableType> bindable) {
        if (isNested(element)) {
            collect(element, prefix, bindable);
        }
    }

    /** A settings class of the starter's own, bound property by property (not one value). */
    private static boolean isNested(Class<?> type) {
        return type.getName().startsWith("dev.sluice.boot.") && !type.isEnum();
    }

    private static String kebab(String name) {
        return name.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
    }

    private static List<String> values(@Nullable JsonNode hint) {
        assertThat(hint).as("hint").isNotNull();
        return hint.path("values").valueStream().map(value -> value.path("value").asText()).toList();
    }

    private static List<String> providers(@Nullable JsonNode hint) {
        assertThat(hint).as("hint").isNotNull();
        return hint.path("providers").valueStream().map(provider -> provider.path("name").asText()).toList();
    }

    private static Map<String, JsonNode> byName(JsonNode items) {
        Map<String, JsonNode> named = new LinkedHashMap<>();
        items.forEach(item -> named.put(item.path("name").asText(), item));
        return named;
    }

    /** The starter's metadata, found among every jar's by its {@code sluice} group. */
    private static JsonNode sluiceMetadata() throws IOException {
        List<JsonNode> found = new ArrayList<>();
        for (URL url : Collections.list(ConfigurationMetadataTest.class.getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                JsonNode metadata = new ObjectMapper().readTree(in);
                if (byName(metadata.path("groups")).containsKey("sluice")) {
                    found.add(metadata);
                }
            }
        }
        assertThat(found).hasSize(1);
        return found.get(0);
    }
}
