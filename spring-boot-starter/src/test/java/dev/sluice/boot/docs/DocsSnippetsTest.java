package dev.sluice.boot.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The code examples of the documentation compile as pasted: a code block preceded by
 * {@code <!-- snippet: path/to/File.java#tag -->} must equal the imports of that file that the
 * region uses, a blank line, and the region of the file between {@code // tag::tag[]} and
 * {@code // end::tag[]} (indentation removed; several tags, separated by commas, are joined by a
 * blank line), and the file is compiled by the build. Run with {@code -Dsluice.docs.update=true},
 * the test rewrites the blocks from the files instead.
 */
class DocsSnippetsTest {

    private static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+?)#(\\S+) -->$");

    /** An import line: whether it is static, and the simple name it brings in. */
    private static final Pattern IMPORT = Pattern.compile("^import (static )?[\\w.]*\\.(\\w+);$");

    @Test
    void everyMarkedCodeBlockEqualsItsCompiledSource() {
        List<String> differences = new ArrayList<>();
        int checked = 0;
        for (Path file : DocFiles.markdown()) {
            String text = DocFiles.read(file);
            List<String> lines = new ArrayList<>(List.of(text.split("\n", -1)));
            boolean changed = false;
            for (int i = 0; i < lines.size(); i++) {
                Matcher marker = MARKER.matcher(lines.get(i).strip());
                if (!marker.matches()) {
                    continue;
                }
                String where = DocFiles.relative(file) + ":" + (i + 1);
                int open = i + 1;
                if (open >= lines.size() || !lines.get(open).startsWith("```")) {
                    differences.add(where + ": the snippet marker is not followed by a code block");
                    continue;
                }
                int close = open + 1;
                while (close < lines.size() && !lines.get(close).startsWith("```")) {
                    close++;
                }
                Path source = DocFiles.root().resolve(marker.group(1));
                if (!Files.isRegularFile(source)) {
                    differences.add(where + ": no such file, " + marker.group(1));
                    continue;
                }
                String expected;
                try {
                    expected = snippet(DocFiles.read(source), marker.group(2).split(","));
                } catch (IllegalArgumentException e) {
                    differences.add(where + ": " + e.getMessage() + " in " + marker.group(1));
                    continue;
                }
                String actual = String.join("\n", lines.subList(open + 1, close));
                checked++;
                if (actual.equals(expected)) {
                    continue;
                }
                if (DocFiles.UPDATE) {
                    lines.subList(open + 1, close).clear();
                    lines.addAll(open + 1, List.of(expected.split("\n", -1)));
                    changed = true;
                } else {
                    differences.add(where + ": the code block differs from " + marker.group(1) + "#" + marker.group(2)
                            + "\n--- in the documentation\n" + actual + "\n--- in the source\n" + expected);
                }
            }
            if (changed) {
                DocFiles.write(file, String.join("\n", lines));
            }
        }
        assertThat(differences)
                .as("code blocks that differ from their compiled sources. " + DocFiles.howToUpdate("DocsSnippetsTest"))
                .isEmpty();
        assertThat(checked).as("snippets checked").isGreaterThan(0);
    }

    @Test
    void regionsLoseTheirIndentationAndNestedTags() {
        String source = """
                class A {
                    // tag::a[]
                    void a() {
                        // tag::b[]
                        b();
                        // end::b[]
                    }
                    // end::a[]
                }
                """;
        assertThat(regions(source, new String[] {"a"})).isEqualTo("void a() {\n    b();\n}");
        assertThat(regions(source, new String[] {"b", "b"})).isEqualTo("b();\n\nb();");
    }

    @Test
    void aSnippetStartsWithTheImportsItsRegionUses() {
        String source = """
                package a;

                import static java.util.Objects.requireNonNull;

                import java.time.Duration;
                import java.time.DurationFormatter;
                import java.util.List;

                class A {
                    // tag::a[]
                    Duration d = requireNonNull(Duration.ZERO);
                    // end::a[]
                }
                """;
        assertThat(snippet(source, new String[] {"a"})).isEqualTo("""
                import static java.util.Objects.requireNonNull;

                import java.time.Duration;

                Duration d = requireNonNull(Duration.ZERO);""");
        assertThat(snippet("class B {\n// tag::b[]\nint b;\n// end::b[]\n}", new String[] {"b"})).isEqualTo("int b;");
    }

    /**
     * What a reader pastes: the imports of a source file that its tagged regions use (static
     * ones first, as in the file, separated by a blank line), a blank line, and the regions.
     */
    static String snippet(String source, String[] tags) {
        String regions = regions(source, tags);
        List<String> imports = new ArrayList<>();
        for (String line : source.split("\n")) {
            Matcher imported = IMPORT.matcher(line);
            if (!imported.matches() || !Pattern.compile("\\b" + imported.group(2) + "\\b").matcher(regions).find()) {
                continue;
            }
            boolean afterStatic = !imports.isEmpty() && imports.get(imports.size() - 1).startsWith("import static");
            if (afterStatic && imported.group(1) == null) {
                imports.add("");
            }
            imports.add(line.strip());
        }
        return imports.isEmpty() ? regions : String.join("\n", imports) + "\n\n" + regions;
    }

    /** The tagged regions of a source file, each without its common indentation, joined by blank lines. */
    static String regions(String source, String[] tags) {
        List<String> regions = new ArrayList<>();
        for (String tag : tags) {
            regions.add(region(source, tag));
        }
        return String.join("\n\n", regions);
    }

    private static String region(String source, String tag) {
        List<String> lines = List.of(source.split("\n", -1));
        int start = -1;
        int end = -1;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.equals("// tag::" + tag + "[]")) {
                start = i;
            } else if (line.equals("// end::" + tag + "[]")) {
                end = i;
            }
        }
        if (start < 0 || end <= start) {
            throw new IllegalArgumentException("no region tagged " + tag);
        }
        List<String> region = lines.subList(start + 1, end).stream()
                .filter(line -> !line.strip().matches("// (tag|end)::[\\w-]+\\[\\]"))
                .map(String::stripTrailing)
                .toList();
        int indent = region.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return String.join("\n", region.stream().map(line -> line.isBlank() ? "" : line.substring(indent)).toList());
    }
}
