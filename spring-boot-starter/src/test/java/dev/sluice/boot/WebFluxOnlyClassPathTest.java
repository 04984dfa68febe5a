package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.boot.reactiveapp.IsolatedLauncher;
import dev.sluice.boot.web.reactive.ReactiveRateLimitExceptionHandler;
import java.io.Closeable;
import java.io.File;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A WebFlux application whose class path has the starter and Spring Boot's WebFlux starter, but
 * neither the Servlet API nor Spring MVC nor Tomcat: it starts, on Reactor Netty, and its limits
 * answer with a 429. The application runs in a class loader of its own, made of the test's class
 * path without those jars, so that any class of the starter needing them fails to load, as it
 * would in such an application.
 */
class WebFluxOnlyClassPathTest {

    /** The jars of the servlet stack, which a WebFlux-only application does not have. */
    private static final Pattern SERVLET_STACK = Pattern.compile("(jakarta\\.servlet-api|spring-webmvc"
            + "|spring-boot-webmvc|spring-boot-servlet|spring-boot-tomcat|spring-boot-starter-tomcat(-runtime)?"
            + "|spring-boot-starter-webmvc|tomcat-embed-[a-z]+)-\\d[^" + Pattern.quote(File.separator) + "]*\\.jar");

    @Test
    void startsOnReactorNettyAndAnswersTheFourthCodeWithA429() throws Exception {
        List<URL> kept = new ArrayList<>();
        List<String> left = new ArrayList<>();
        for (String entry : testClassPath()) {
            if (SERVLET_STACK.matcher(Path.of(entry).getFileName().toString()).matches()) {
                left.add(Path.of(entry).getFileName().toString());
            } else {
                kept.add(url(entry));
            }
        }
        assertThat(left).as("the servlet stack on the test's class path")
                .anyMatch(jar -> jar.startsWith("jakarta.servlet-api-"))
                .anyMatch(jar -> jar.startsWith("spring-webmvc-"))
                .anyMatch(jar -> jar.startsWith("tomcat-embed-core-"));

        try (URLClassLoader loader = new URLClassLoader(kept.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> loader.loadClass("jakarta.servlet.Filter")).isInstanceOf(ClassNotFoundException.class);
            assertThatThrownBy(() -> loader.loadClass("org.springframework.web.servlet.DispatcherServlet"))
                    .isInstanceOf(ClassNotFoundException.class);
            Class<?> launcher = loader.loadClass(IsolatedLauncher.class.getName());
            assertThat(launcher).isNotSameAs(IsolatedLauncher.class);

            Thread thread = Thread.currentThread();
            ClassLoader previous = thread.getContextClassLoader();
            thread.setContextClassLoader(loader);
            Closeable application;
            try {
                application = (Closeable) launcher.getMethod("start", String[].class).invoke(null,
                        (Object) new String[] {"--server.port=0", "--sluice.web.trusted-proxies=127.0.0.1"});
            } finally {
                thread.setContextClassLoader(previous);
            }
            try (application) {
                assertThat((String) launcher.getMethod("webServer", Closeable.class).invoke(null, application))
                        .contains("Netty");
                assertThat((boolean) launcher.getMethod("hasBean", Closeable.class, String.class).invoke(null,
                        application, ReactiveRateLimitExceptionHandler.class.getName())).isTrue();
                int port = (int) launcher.getMethod("port", Closeable.class).invoke(null, application);

                HttpClient http = HttpClient.newHttpClient();
                for (int i = 0; i < 3; i++) {
                    HttpResponse<String> admitted = sendOtp(http, port, "+1555080" + i);
                    assertThat(admitted.statusCode()).isEqualTo(202);
                    assertThat(admitted.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"otp-ip\";r=" + (2 - i));
                }
                HttpResponse<String> rejected = sendOtp(http, port, "+15550809");
                assertThat(rejected.statusCode()).isEqualTo(429);
                assertThat(rejected.headers().firstValue("Retry-After")).hasValue("900");
                assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"otp-ip\";q=3;w=60");
                assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"otp-ip\";r=0;t=900");
                assertThat(ReactiveHttpLimitsContract.json(rejected.body()))
                        .isEqualTo(ReactiveHttpLimitsContract.json(ReactiveHttpLimitsContract.OTP_REJECTION));
            }
        }
    }

    private static HttpResponse<String> sendOtp(HttpClient http, int port, String phone) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/otp"))
                .header("X-Forwarded-For", "203.0.113.80").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"phone\":\"" + phone + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The test's class path as Surefire or the IDE gives it. */
    private static List<String> testClassPath() {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return List.of(classPath.split(Pattern.quote(File.pathSeparator)));
    }

    private static URL url(String entry) {
        try {
            return Path.of(entry).toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(entry, e);
        }
    }
}
