package dev.sluice.boot.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The repository's Markdown documentation, found from the directory the tests run in (the
 * starter's or the Spring Boot 3.5 starter's module directory) by walking up to the directory
 * that holds {@code README.md} and {@code docs/}.
 */
final class DocFiles {

    /** Set to {@code true} to rewrite the generated parts of the documentation instead of checking them. */
    static final boolean UPDATE = Boolean.getBoolean("sluice.docs.update");

    /** How to have a test rewrite what it checks, for its failure message. */
    static String howToUpdate(String test) {
        return "To regenerate it, run from the repository's root: mvn -B -ntp -pl spring-boot-starter -am test -Dtest="
                + test + " -Dsurefire.failIfNoSpecifiedTests=false -Dsluice.docs.update=true, then review the diff.";
    }

    private DocFiles() {
    }

    static Path root() {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
            if (Files.isRegularFile(candidate.resolve("README.md")) && Files.isDirectory(candidate.resolve("docs"))
                    && Files.isRegularFile(candidate.resolve("pom.xml"))) {
                return candidate;
            }
        }
        throw new IllegalStateException("No directory holding README.md and docs/ above " + dir);
    }

    /** README.md, CHANGELOG.md, benchmarks/RESULTS.md and every page of docs/. */
    static List<Path> markdown() {
        Path root = root();
        List<Path> files = new ArrayList<>();
        for (String name : List.of("README.md", "CHANGELOG.md", "benchmarks/RESULTS.md")) {
            if (Files.isRegularFile(root.resolve(name))) {
                files.add(root.resolve(name));
            }
        }
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(path -> path.getFileName().toString().endsWith(".md")).sorted().forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void write(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String relative(Path file) {
        return root().relativize(file).toString().replace('\\', '/');
    }
}
