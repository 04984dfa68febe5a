package dev.sluice.boot.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every relative link of the Markdown documentation (README.md, CHANGELOG.md,
 * benchmarks/RESULTS.md and docs/) points at a file that exists, and every {@code #anchor} at a
 * heading of its target as GitHub names it. Links to other sites are not followed.
 */
class DocsLinksTest {

    private static final Pattern INLINE_LINK = Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

    private static final Pattern REFERENCE_DEFINITION = Pattern.compile("(?m)^ {0,3}\\[[^\\]]+\\]:[ \\t]*<?([^\\s>]+)>?.*$");

    private static final Pattern HTML_LINK = Pattern.compile("<a\\s[^>]*href=\"([^\"]+)\"");

    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");

    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

    private final Map<Path, Set<String>> anchors = new HashMap<>();

    @Test
    void everyRelativeLinkAndAnchorResolves() {
        List<String> broken = new ArrayList<>();
        int relative = 0;
        for (Path file : DocFiles.markdown()) {
            for (Link link : links(DocFiles.read(file))) {
                relative += SCHEME.matcher(link.target()).find() ? 0 : 1;
                String problem = check(file, link.target());
                if (problem != null) {
                    broken.add(DocFiles.relative(file) + ":" + link.line() + ": " + link.target() + " — " + problem);
                }
            }
        }
        assertThat(broken).as("broken links in the documentation").isEmpty();
        assertThat(relative).as("relative links checked").isGreaterThan(50);
    }

    @Test
    void findsLinksInProseOnly() {
        String markdown = "See [a](b.md#c), `[x](y.md)` and\n```\n[z](w.md)\n```\n[two\nlines](m.md) ![i](p.png)\n"
                + "[ref]: r.md\n<a href=\"h.md\">h</a>\n";
        assertThat(links(markdown)).extracting(Link::target).containsExactlyInAnyOrder("b.md#c", "m.md", "p.png", "h.md", "r.md");
        assertThat(links(markdown)).filteredOn(link -> link.target().equals("m.md")).extracting(Link::line).containsExactly(5);
    }

    @Test
    void slugsFollowGitHub() {
        assertThat(slugs("# Who is being limited: top keys\n## `sluice.*` and `#ip`\n## A\n## A\n## A\n"))
                .containsExactly("who-is-being-limited-top-keys", "sluice-and-ip", "a", "a-1", "a-2");
        assertThat(slugs("## Reactive, WebFlux and Kotlin\n## [Linked](x.md) heading_name\n```\n# not a heading\n```\n"))
                .containsExactly("reactive-webflux-and-kotlin", "linked-heading_name");
    }

    private String check(Path file, String target) {
        if (SCHEME.matcher(target).find() || target.startsWith("//")) {
            return null;                                     // another site (http, https, mailto): not checked
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        int query = path.indexOf('?');
        if (query >= 0) {
            path = path.substring(0, query);
        }
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(decode(path)).normalize();
        if (!resolved.startsWith(DocFiles.root())) {
            return "points outside the repository";
        }
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (anchor == null) {
            return null;
        }
        if (!resolved.getFileName().toString().endsWith(".md")) {
            return "an anchor into a file that is not Markdown";
        }
        Set<String> headings = anchors.computeIfAbsent(resolved, target1 -> slugs(DocFiles.read(target1)));
        return headings.contains(decode(anchor)) ? null : "no heading with that anchor (there are: " + headings + ")";
    }

    private static String decode(String text) {
        return java.net.URLDecoder.decode(text.replace("+", "%2B"), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The anchors GitHub gives the headings of a Markdown text, in order, duplicates numbered. */
    static Set<String> slugs(String markdown) {
        Set<String> slugs = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.stripLeading().startsWith("```") || line.stripLeading().startsWith("~~~")) {
                fenced = !fenced;
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (fenced || !heading.matches()) {
                continue;
            }
            String slug = slug(heading.group(2));
            int count = seen.merge(slug, 1, Integer::sum);
            slugs.add(count == 1 ? slug : slug + "-" + (count - 1));
        }
        return slugs;
    }

    /** GitHub's slug of a heading: its text as rendered, lower case, punctuation but - and _ dropped, spaces as -. */
    static String slug(String heading) {
        String text = heading
                .replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1")     // links and images: their text
                .replaceAll("<[^>]+>", "")                          // inline HTML
                .replace("`", "");
        StringBuilder slug = new StringBuilder();
        text.toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
            if (c == ' ') {
                slug.append('-');
            } else if (c == '-' || c == '_' || Character.isLetterOrDigit(c)
                    || Character.getType(c) == Character.NON_SPACING_MARK) {
                slug.appendCodePoint(c);
            }
        });
        return slug.toString();
    }

    /** The link targets of a Markdown text outside code blocks and code spans, with their line numbers. */
    static List<Link> links(String markdown) {
        StringBuilder prose = new StringBuilder();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            boolean fence = line.stripLeading().startsWith("```") || line.stripLeading().startsWith("~~~");
            if (fence) {
                fenced = !fenced;
            }
            prose.append(fence || fenced ? "" : line.replaceAll("`[^`]*`", "``")).append('\n');
        }
        String text = prose.toString();
        List<Link> links = new ArrayList<>();
        for (Pattern pattern : List.of(INLINE_LINK, HTML_LINK, REFERENCE_DEFINITION)) {
            Matcher link = pattern.matcher(text);
            while (link.find()) {
                int line = (int) text.substring(0, link.start()).chars().filter(c -> c == '\n').count() + 1;
                links.add(new Link(line, link.group(1)));
            }
        }
        return links;
    }

    record Link(int line, String target) {
    }
}
