package dev.sluice.boot.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.sluice.boot.autoconfigure.SluiceProperties;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * The {@code sluice:} YAML examples of the documentation are configuration the starter accepts:
 * each code block that starts with {@code sluice:} binds to {@link SluiceProperties}, every property
 * used (a misspelt or invented one fails, as it fails an application's start-up).
 */
class DocsYamlSnippetsTest {

    @Test
    void everySluiceYamlExampleBinds() {
        List<String> examples = new ArrayList<>();
        for (Path file : DocFiles.markdown()) {
            String[] lines = DocFiles.read(file).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                if (!lines[i].strip().equals("```yaml")) {
                    continue;
                }
                StringBuilder block = new StringBuilder();
                int j = i + 1;
                while (j < lines.length && !lines[j].startsWith("```")) {
                    block.append(lines[j++]).append('\n');
                }
                if (block.toString().stripLeading().startsWith("sluice:")) {
                    String where = DocFiles.relative(file) + ":" + (i + 1);
                    examples.add(where);
                    assertThatCode(() -> bind(block.toString())).as("the YAML example at %s", where)
                            .doesNotThrowAnyException();
                }
                i = j;
            }
        }
        assertThat(examples).as("sluice: YAML examples").hasSizeGreaterThan(5);
    }

    private static SluiceProperties bind(String yaml) throws IOException {
        List<PropertySource<?>> sources = new YamlPropertySourceLoader()
                .load("example", new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
        Binder binder = new Binder(ConfigurationPropertySources.from(sources), null,
                ApplicationConversionService.getSharedInstance());
        return binder.bind("sluice", Bindable.of(SluiceProperties.class),
                new NoUnboundElementsBindHandler(BindHandler.DEFAULT)).get();
    }
}
