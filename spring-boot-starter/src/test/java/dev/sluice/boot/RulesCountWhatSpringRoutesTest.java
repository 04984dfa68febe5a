package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.servlet.config.annotation.PathMatchConfigurer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * A rule counts every request the application routes to the handler of its path, however the
 * client writes it: HEAD for GET, matrix parameters and {@code ;jsessionid}, percent-encoded
 * characters, and letter case where the application matches paths case-insensitively. Each
 * request is counted under the key of the route it reaches: its {@code #path} variables are those
 * the handler gets. One rule, {@code catalog} on {@code GET /catalog/{org}} keyed by the
 * organization, on Spring MVC (Tomcat) and WebFlux (Netty), each with Spring's default path
 * matching and with case-insensitive matching. What Spring routes nowhere (a trailing or doubled
 * slash, which Spring Framework 7 matches to no handler; letter case where matching is
 * case-sensitive) is a 404 that this rule, naming the handler's path, does not count either.
 */
class RulesCountWhatSpringRoutesTest {

    /** The catalog handler, counting the requests it serves and noting the organization of the last. */
    @RestController
    static class Catalog {

        static final AtomicInteger CALLS = new AtomicInteger();
        static final AtomicReference<String> LAST_ORG = new AtomicReference<>();

        @GetMapping("/catalog/{org}")
        Map<String, String> catalog(@PathVariable String org) {
            CALLS.incrementAndGet();
            LAST_ORG.set(org);
            return Map.of("org", org);
        }
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(Catalog.class)
    static class CatalogApp {
    }

    /** Case-insensitive path matching, as an application configures it on either stack. */
    @Import({CaseInsensitive.Mvc.class, CaseInsensitive.WebFlux.class})
    static class CaseInsensitive {

        static class Mvc implements WebMvcConfigurer {
            @Override
            public void configurePathMatch(PathMatchConfigurer configurer) {
                PathPatternParser parser = new PathPatternParser();
                parser.setCaseSensitive(false);
                configurer.setPatternParser(parser);
            }
        }

        static class WebFlux implements WebFluxConfigurer {
            @Override
            public void configurePathMatching(org.springframework.web.reactive.config.PathMatchConfigurer configurer) {
                configurer.setUseCaseSensitiveMatch(false);
            }
        }
    }

    /** One running application, by what it is. */
    private record App(String name, ConfigurableApplicationContext context, boolean caseInsensitive) {

        URI uri(String path) {
            return URI.create("http://127.0.0.1:" + context.getEnvironment().getRequiredProperty("local.server.port", Integer.class)
                    + path);
        }
    }

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final AtomicInteger ORGS = new AtomicInteger();
    private static final List<App> APPS = new ArrayList<>();

    @BeforeAll
    static void start() {
        // A configuration name of its own leaves out the test resources' application.properties.
        String[] rule = {"--server.port=0", "--spring.config.name=rules-count-what-spring-routes",
            "--sluice.http.rules[0].name=catalog", "--sluice.http.rules[0].path=/catalog/{org}",
            "--sluice.http.rules[0].methods=GET", "--sluice.http.rules[0].key=#path['org']",
            "--sluice.http.rules[0].tiers[0].limit=3", "--sluice.http.rules[0].tiers[0].window=1m",
            "--sluice.http.rules[0].tiers[0].algorithm=SLIDING_LOG"};
        for (String stack : List.of("servlet", "reactive")) {
            for (boolean caseInsensitive : List.of(false, true)) {
                SpringApplicationBuilder builder = caseInsensitive
                        ? new SpringApplicationBuilder(CatalogApp.class, CaseInsensitive.class)
                        : new SpringApplicationBuilder(CatalogApp.class);
                APPS.add(new App(stack + (caseInsensitive ? ", case-insensitive" : ""),
                        builder.properties("spring.main.web-application-type=" + stack).run(rule), caseInsensitive));
            }
        }
    }

    @AfterAll
    static void stop() {
        APPS.forEach(app -> app.context.close());
    }

    /** Whether Spring routes a variant to the handler: Spring Framework 7 matches no trailing or doubled slash. */
    private enum Routed { ALWAYS, WHERE_CASE_INSENSITIVE, NEVER }

    /**
     * A way of writing a request for an organization's catalog.
     *
     * @param name   what it varies
     * @param method the request's method
     * @param path   its path, from the organization's name
     * @param routed whether Spring routes it to the handler
     */
    private record Variant(String name, String method, UnaryOperator<String> path, Routed routed) {

        boolean routedBy(App app) {
            return routed == Routed.ALWAYS || routed == Routed.WHERE_CASE_INSENSITIVE && app.caseInsensitive;
        }
    }

    private static final List<Variant> VARIANTS = List.of(
            new Variant("as mapped", "GET", org -> "/catalog/" + org, Routed.ALWAYS),
            new Variant("HEAD for GET", "HEAD", org -> "/catalog/" + org, Routed.ALWAYS),
            new Variant(";jsessionid", "GET", org -> "/catalog/" + org + ";jsessionid=0123ABCD", Routed.ALWAYS),
            new Variant("matrix parameters on the variable", "GET", org -> "/catalog/" + org + ";color=red;size=9",
                    Routed.ALWAYS),
            new Variant("a matrix parameter on a literal segment", "GET", org -> "/catalog;v=1/" + org, Routed.ALWAYS),
            new Variant("a percent-encoded literal", "GET", org -> "/c%61talog/" + org, Routed.ALWAYS),
            new Variant("a percent-encoded variable", "GET", org -> "/catalog/%6F" + org.substring(1), Routed.ALWAYS),
            new Variant("HEAD with matrix parameters and encoding", "HEAD", org -> "/c%61talog;v=1/" + org + ";a=b",
                    Routed.ALWAYS),
            new Variant("upper case", "GET", org -> "/CATALOG/" + org, Routed.WHERE_CASE_INSENSITIVE),
            new Variant("mixed case, HEAD", "HEAD", org -> "/Catalog/" + org, Routed.WHERE_CASE_INSENSITIVE),
            new Variant("a trailing slash", "GET", org -> "/catalog/" + org + "/", Routed.NEVER),
            new Variant("a doubled slash", "GET", org -> "/catalog//" + org, Routed.NEVER),
            new Variant("a leading doubled slash", "GET", org -> "//catalog/" + org, Routed.NEVER));

    @Test
    void everyRequestTheHandlerServesIsCountedUnderTheKeyOfItsRoute() {
        SoftAssertions softly = new SoftAssertions();
        for (App app : APPS) {
            for (Variant variant : VARIANTS) {
                String org = "org" + ORGS.incrementAndGet();
                int callsBefore = Catalog.CALLS.get();
                Catalog.LAST_ORG.set(null);
                HttpResponse<String> response = send(variant.method, app.uri(variant.path.apply(org)));
                boolean served = Catalog.CALLS.get() - callsBefore == 1;
                String policy = response.headers().firstValue("RateLimit-Policy").orElse("");
                String as = app.name + ", " + variant.name + ": " + variant.method + " " + variant.path.apply(org)
                        + " answered " + response.statusCode();
                softly.assertThat(served).as(as + ": served by the handler").isEqualTo(variant.routedBy(app));
                softly.assertThat(policy.contains("\"catalog\"")).as(as + ": counted by the rule").isEqualTo(served);
                if (served) {
                    HttpResponse<String> next = send("GET", app.uri("/catalog/" + Catalog.LAST_ORG.get()));
                    softly.assertThat(next.headers().firstValue("RateLimit").orElse(""))
                            .as(as + ": then the handler's own path for " + Catalog.LAST_ORG.get() + " has one permit left")
                            .startsWith("\"catalog\";r=1;");
                }
            }
        }
        softly.assertAll();
    }

    private static HttpResponse<String> send(String method, URI uri) {
        try {
            return HTTP.send(HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
