package dev.sluice.boot.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/configuration.md} lists every {@code sluice.*} property: the table between its
 * {@code <!-- properties:start -->} and {@code <!-- properties:end -->} markers is what the starter's
 * configuration metadata (the configuration processor's output, merged with
 * {@code additional-spring-configuration-metadata.json}) gives, so the page cannot drift from the code.
 * Run with {@code -Dsluice.docs.update=true}, the test rewrites the table instead of checking it.
 */
class ConfigurationReferenceTest {

    static final String START = "<!-- properties:start -->";

    static final String END = "<!-- properties:end -->";

    @Test
    void theReferenceListsEveryPropertyAsTheMetadataDescribesIt() throws IOException {
        Path page = DocFiles.root().resolve("docs/configuration.md");
        String text = DocFiles.read(page);
        int start = text.indexOf(START);
        int end = text.indexOf(END);
        assertThat(start).as("%s in docs/configuration.md", START).isNotNegative();
        assertThat(end).as("%s after %s in docs/configuration.md", END, START).isGreaterThan(start);

        String expected = "\n" + table(sluiceMetadata()) + "\n";
        String actual = text.substring(start + START.length(), end);
        if (DocFiles.UPDATE) {
            DocFiles.write(page, text.substring(0, start + START.length()) + expected + text.substring(end));
            return;
        }
        assertThat(actual)
                .as("the property table of docs/configuration.md differs from the configuration metadata. "
                        + DocFiles.howToUpdate("ConfigurationReferenceTest"))
                .isEqualTo(expected);
    }

    /** One row per {@code sluice.*} property, in the metadata's order (by name). */
    static String table(JsonNode metadata) {
        StringBuilder table = new StringBuilder("| Property | Type | Default | Description |\n| --- | --- | --- | --- |\n");
        for (JsonNode property : metadata.path("properties")) {
            String name = property.path("name").asText();
            if (!name.startsWith("sluice.")) {
                continue;
            }
            table.append("| `").append(name).append("` | `").append(simpleType(property.path("type").asText()))
                    .append("` | ").append(defaultValue(property.path("defaultValue"))).append(" | ")
                    .append(cell(property.path("description").asText())).append(" |\n");
        }
        return table.toString();
    }

    /**
     * {@code java.util.List<dev.sluice.boot.autoconfigure.SluiceProperties$TierProperties>} as
     * {@code List<TierProperties>}.
     */
    static String simpleType(String type) {
        return type.replaceAll("\\b(?:[a-z_][a-z0-9_]*\\.)+", "").replaceAll("\\w+\\$", "");
    }

    private static String defaultValue(JsonNode value) {
        if (value.isMissingNode() || value.isNull()) {
            return "";
        }
        List<String> values = new ArrayList<>();
        if (value.isArray()) {
            value.forEach(item -> values.add(item.asText()));
        } else {
            values.add(value.asText());
        }
        return "`" + String.join(", ", values) + "`";
    }

    /** The text as it reads, with what Markdown or HTML would take for markup escaped. */
    private static String cell(String text) {
        StringBuilder cell = new StringBuilder();
        for (char c : text.strip().replaceAll("\\s+", " ").toCharArray()) {
            switch (c) {
                case '<' -> cell.append("&lt;");
                case '>' -> cell.append("&gt;");
                case '\\', '|', '*', '_', '[', ']', '`' -> cell.append('\\').append(c);
                default -> cell.append(c);
            }
        }
        return cell.toString();
    }

    /** The starter's metadata, found among every jar's by its {@code sluice} group. */
    static JsonNode sluiceMetadata() throws IOException {
        List<JsonNode> found = new ArrayList<>();
        for (URL url : Collections.list(ConfigurationReferenceTest.class.getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                JsonNode metadata = new ObjectMapper().readTree(in);
                for (JsonNode group : metadata.path("groups")) {
                    if (group.path("name").asText().equals("sluice")) {
                        found.add(metadata);
                        break;
                    }
                }
            }
        }
        assertThat(found).as("the starter's configuration metadata on the class path").hasSize(1);
        return found.get(0);
    }
}
