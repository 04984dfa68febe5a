package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.Tier;
import dev.sluice.annotation.RateLimited;
import dev.sluice.redisson.RedissonRateLimitStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.web.client.RestClient;

/**
 * What a developer sees when a Sluice setting or annotation is wrong: the application does not
 * start, and Spring Boot's report says what is wrong and, under "Action:", what to change, never
 * a stack trace in which the reason is the last of many causes.
 */
@ExtendWith(OutputCaptureExtension.class)
class ConfigurationMistakesTest {

    /** A service whose limiter has the default name {@code Hello.hello}. */
    static class Hello {
        @RateLimited(limit = 5, window = "1m")
        public String hello() {
            return "hello";
        }
    }

    /** A service with a key expression that can never work on a String. */
    static class Misspelled {
        @RateLimited(key = "#user.toLowerCas()", limit = 5, window = "1m")
        public String hello(String user) {
            return "hello " + user;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Hello.class)
    static class HelloApp {
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Misspelled.class)
    static class MisspelledApp {
    }

    /** An application without limited beans, and so without proxies, which a filtered class loader could not define. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class EmptyApp {
    }

    /** An application whose store cannot give permits back, as the Bucket4j store cannot. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class KeepingStoreApp {

        @Bean
        RateLimitStore keepingStore() {
            InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().build();
            return new RateLimitStore() {
                @Override
                public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
                    return memory.tryAcquire(key, tiers, cost);
                }

                @Override
                public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
                    return memory.tryAcquireAsync(key, tiers, cost);
                }
            };
        }
    }

    /**
     * Starts the application, which must fail, and returns Spring Boot's report of the failure.
     * The test resources' application.properties, for other tests, is left out.
     */
    private static String failureReport(CapturedOutput output, SpringApplication application, String... args) {
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setDefaultProperties(java.util.Map.of("spring.config.name", "configuration-mistakes"));
        assertThatThrownBy(() -> application.run(args).close()).isInstanceOf(RuntimeException.class);
        String all = output.getAll();
        assertThat(all).contains("APPLICATION FAILED TO START");
        return all.substring(all.indexOf("APPLICATION FAILED TO START"));
    }

    private static String failureReport(CapturedOutput output, String... args) {
        return failureReport(output, new SpringApplication(HelloApp.class), args);
    }

    @Test
    void aDottedLimiterNameWithoutBracketsIsCaughtAndWrittenWithThem(CapturedOutput output) {
        String report = failureReport(output, "--sluice.limits.Hello.hello.tiers[0].limit=1",
                "--sluice.limits.Hello.hello.tiers[0].window=1m");

        assertThat(report).contains("Description:", "splits a limiter name at its dots", "Action:",
                "Write limiter names that contain dots in brackets: sluice.limits[Hello.hello].tiers[0].limit,"
                        + " sluice.limits[Hello.hello].tiers[0].window.");
    }

    @Test
    void aMisspelledSettingIsNamed(CapturedOutput output) {
        String report = failureReport(output, "--sluice.limits[Hello.hello].tier[0].limit=1");

        assertThat(report).contains("sluice.limits[Hello.hello].tier[0].limit", "is not a Sluice setting", "Action:",
                "A limiter under sluice.limits.<name> takes enabled, tiers[n].limit, window");
    }

    @Test
    void aLimiterNameNoMethodHasIsNamedWithTheNamesThatExist(CapturedOutput output) {
        String report = failureReport(output, "--sluice.limits.hello.enabled=false");

        assertThat(report).contains("[sluice.limits.hello] configure limiters that no @RateLimited method has;"
                + " the limiters are [Hello.hello].", "Action:", "Use the name of one of these limiters, in brackets"
                + " when it has dots");
    }

    @Test
    void anIncompleteTierSaysWhatToSet(CapturedOutput output) {
        String report = failureReport(output, "--sluice.limits[Hello.hello].tiers[0].limit=1");

        assertThat(report).contains("sluice.limits[Hello.hello].tiers[0] needs both a limit and a window", "Action:",
                "Set sluice.limits[Hello.hello].tiers[0].limit and sluice.limits[Hello.hello].tiers[0].window");
    }

    @Test
    void theRedisStoreWithoutItsModuleSaysWhichDependencyToAdd(CapturedOutput output) {
        SpringApplication application = new SpringApplication(EmptyApp.class);
        application.setResourceLoader(new DefaultResourceLoader(new FilteredClassLoader(RedissonRateLimitStore.class)));

        String report = failureReport(output, application, "--sluice.store=redis");

        assertThat(report).contains("sluice.store=redis needs the Redis store, which is not on the class path.",
                "Action:", "Add the dependency dev.sluice:sluice-redisson").doesNotContain("Caused by");
    }

    /** An application calling a partner through a RestClient built from Spring Boot's builder. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class PartnerClientApp {

        @Bean
        RestClient partner(RestClient.Builder builder) {
            return builder.baseUrl("http://127.0.0.1:9").build();
        }
    }

    /** A client rule, and Spring Boot's HTTP client builders left out, as a dependency left out leaves them. */
    private static String[] clientRuleWithoutBuilders() {
        boolean springBoot3 = String.valueOf(SpringBootVersion.getVersion()).startsWith("3.");
        String builders = springBoot3
                ? "org.springframework.boot.autoconfigure.web.client.RestClientAutoConfiguration,"
                        + "org.springframework.boot.autoconfigure.web.client.RestTemplateAutoConfiguration,"
                        + "org.springframework.boot.autoconfigure.web.reactive.function.client.WebClientAutoConfiguration"
                : "org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration,"
                        + "org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration,"
                        + "org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration";
        return new String[] {"--sluice.client.rules[0].name=partner", "--sluice.client.rules[0].host=127.0.0.1:9",
            "--sluice.client.rules[0].tiers[0].limit=5", "--sluice.client.rules[0].tiers[0].window=1s",
            "--spring.autoconfigure.exclude=" + builders};
    }

    @Test
    void aClientBuilderSpringBootDoesNotMakeIsNamedWithItsDependency(CapturedOutput output) {
        String report = failureReport(output, new SpringApplication(PartnerClientApp.class), clientRuleWithoutBuilders());

        String dependency = String.valueOf(SpringBootVersion.getVersion()).startsWith("3.") ? "spring-boot-starter-web"
                : "spring-boot-starter-restclient";
        assertThat(report).contains("A bean needs a RestClient.Builder", "makes only with " + dependency,
                "Action:", "Add the dependency org.springframework.boot:" + dependency);
    }

    @Test
    void clientRulesThatNoBuilderCarriesAreReportedAtStartUp(CapturedOutput output) {
        SpringApplication application = new SpringApplication(EmptyApp.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setDefaultProperties(java.util.Map.of("spring.config.name", "configuration-mistakes"));

        application.run(clientRuleWithoutBuilders()).close();

        assertThat(output.getAll()).contains("Client rules [partner] limit the clients built from the",
                "this application has none of them, so no client is limited: add org.springframework.boot:");
    }

    @Test
    void anAnnotationThatCannotWorkNamesTheMethod(CapturedOutput output) {
        String report = failureReport(output, new SpringApplication(MisspelledApp.class));

        assertThat(report).contains("Invalid @RateLimited on " + Misspelled.class.getName() + ".hello(String): key"
                + " '#user.toLowerCas()' calls toLowerCas() with 0 arguments", "Action:",
                "Correct the @RateLimited annotation named above.");
    }

    /** A client rule for the partner, completed or spoilt by one more setting; the failure names the rule. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            host=                              | sluice.client.rules[0] (partner) has no host                        | Set sluice.client.rules[0].host
            host=api.partner.example/v1        | sluice.client.rules[0].host (partner) 'api.partner.example/v1' is not a host with an optional port | the path goes in sluice.client.rules[0].path
            path=/v1/{account/**               | sluice.client.rules[0].path (partner) '/v1/{account/**' is not a path pattern | Write it in Spring's PathPattern syntax
            methods=FETCH                      | sluice.client.rules[0].methods (partner) has 'FETCH', which is not an HTTP method | Use GET, HEAD, POST
            key=#ip                            | sluice.client.rules[0].key (partner) '#ip' refers to #ip, which a rule does not have | #request (the outbound request)
            key=new java.io.File('/')          | uses new java.io.File('/'), which a rule's expression may not        | put anything else in a bean's method
            max-wait=-1s                       | sluice.client.rules[0] (partner) cannot be built: maxWait must not be negative | with on-limit: wait a positive max-wait
            tiers[0].window=0s                 | sluice.client.rules[0].tiers[0] is invalid                          | Correct the figures of sluice.client.rules[0].tiers[0]
            """)
    void aClientRuleThatCannotWorkIsNamed(String setting, String problem, String action, CapturedOutput output) {
        Map<String, String> rule = new LinkedHashMap<>(Map.of("name", "partner", "host", "api.partner.example",
                "tiers[0].limit", "5", "tiers[0].window", "1s"));
        rule.put(setting.substring(0, setting.indexOf('=')), setting.substring(setting.indexOf('=') + 1));
        String report = failureReport(output, rule.entrySet().stream()
                .map(property -> "--sluice.client.rules[0]." + property.getKey() + "=" + property.getValue())
                .toArray(String[]::new));

        assertThat(report).contains(problem, "Action:", action).doesNotContain("Caused by");
    }

    @Test
    void aClientRuleWithoutTiersIsNamed(CapturedOutput output) {
        String report = failureReport(output, "--sluice.client.rules[0].name=partner",
                "--sluice.client.rules[0].host=api.partner.example");

        assertThat(report).contains("sluice.client.rules[0] (partner) has no tiers", "Action:",
                "sluice.client.rules[0].tiers[0].limit");
    }

    /** The report of a web application with one HTTP rule, completed by the given properties. */
    private static String ruleFailureReport(CapturedOutput output, String... rule) {
        return ruleFailureReport(output, EmptyApp.class, rule);
    }

    private static String ruleFailureReport(CapturedOutput output, Class<?> app, String... rule) {
        SpringApplication application = new SpringApplication(app);
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--sluice.http.rules[0].name=product-api"));
        args.addAll(List.of(rule));
        application.setWebApplicationType(WebApplicationType.SERVLET);
        application.setDefaultProperties(java.util.Map.of("spring.config.name", "configuration-mistakes"));
        assertThatThrownBy(() -> application.run(args.toArray(String[]::new)).close())
                .isInstanceOf(RuntimeException.class);
        String all = output.getAll();
        assertThat(all).contains("APPLICATION FAILED TO START");
        return all.substring(all.indexOf("APPLICATION FAILED TO START"));
    }

    @Test
    void anHttpRuleWithAnUnparsablePathIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/v1/{orgId/**",
                "--sluice.http.rules[0].tiers[0].limit=5", "--sluice.http.rules[0].tiers[0].window=1m");

        assertThat(report).contains("sluice.http.rules[0].path (product-api) '/v1/{orgId/**' is not a path pattern",
                "Action:", "Write it in Spring's PathPattern syntax").doesNotContain("Caused by");
    }

    @Test
    void anHttpRuleWithAnUnknownVariableIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/v1/{orgId}/**",
                "--sluice.http.rules[0].key=#orgId", "--sluice.http.rules[0].tiers[0].limit=5",
                "--sluice.http.rules[0].tiers[0].window=1m");

        assertThat(report).contains("sluice.http.rules[0].key (product-api) '#orgId' refers to #orgId, which a rule"
                + " does not have", "Action:", "#path['orgId']");
    }

    @Test
    void anHttpRuleExpressionNamingATypeIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/v1/**",
                "--sluice.http.rules[0].key=T(java.lang.Runtime).getRuntime().exec('id')",
                "--sluice.http.rules[0].tiers[0].limit=5", "--sluice.http.rules[0].tiers[0].window=1m");

        assertThat(report).contains("sluice.http.rules[0].key (product-api) 'T(java.lang.Runtime).getRuntime()"
                + ".exec('id')' uses T(java.lang.Runtime), which a rule's expression may not", "Action:",
                "put anything else in a bean's method").doesNotContain("Caused by");
    }

    @Test
    void anHttpRuleWithoutTiersIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/v1/**");

        assertThat(report).contains("sluice.http.rules[0] (product-api) has no tiers", "Action:",
                "sluice.http.rules[0].tiers[0].limit");
    }

    @Test
    void aMisspelledRulePropertyIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/v1/**",
                "--sluice.http.rules[0].tier[0].limit=5");

        assertThat(report).contains("sluice.http.rules[0].tier[0].limit", "is not a Sluice setting",
                "a rule under sluice.http.rules[n] takes name, path, methods, condition, key, plan, count-on and"
                        + " tiers[n]");
    }

    /**
     * One element of a list given on the command line replaces the list that application.yml
     * gives (here the default properties): the settings left out are valid, and the report says
     * the list was replaced rather than that they are not Sluice settings.
     */
    @Test
    void oneElementOfAListOverriddenOnTheCommandLineIsNamedAsReplacingTheList(CapturedOutput output) {
        SpringApplication application = new SpringApplication(EmptyApp.class);
        application.setWebApplicationType(WebApplicationType.SERVLET);
        application.setDefaultProperties(java.util.Map.of("spring.config.name", "configuration-mistakes",
                "sluice.http.rules[0].name", "product-api", "sluice.http.rules[0].path", "/v1/**",
                "sluice.http.rules[0].methods[0]", "GET", "sluice.http.rules[0].tiers[0].limit", "5",
                "sluice.http.rules[0].tiers[0].window", "1m"));
        assertThatThrownBy(() -> application.run("--server.port=0", "--sluice.http.rules[0].key=#orgId").close())
                .isInstanceOf(RuntimeException.class);
        String all = output.getAll();
        String report = all.substring(all.indexOf("APPLICATION FAILED TO START"));

        assertThat(report).contains("sluice.http.rules[0].methods[0]",
                "belongs to a list that a higher-priority source replaced whole",
                "Spring Boot takes a list from one property source whole: setting one element of sluice.http.rules")
                .doesNotContain("is not a Sluice setting");
    }

    @Test
    void anHttpRuleConditionThatCannotWorkIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/v1/**",
                "--sluice.http.rules[0].condition=T(java.lang.System).getenv('INTERNAL') == null",
                "--sluice.http.rules[0].tiers[0].limit=5", "--sluice.http.rules[0].tiers[0].window=1m");

        assertThat(report).contains("sluice.http.rules[0].condition (product-api) 'T(java.lang.System)"
                + ".getenv('INTERNAL') == null' uses T(java.lang.System), which a rule's expression may not", "Action:",
                "put anything else in a bean's method").doesNotContain("Caused by");
    }

    @Test
    void anHttpRuleCountingOnSomethingThatIsNotAStatusIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/login",
                "--sluice.http.rules[0].count-on=401, unauthorized", "--sluice.http.rules[0].tiers[0].limit=5",
                "--sluice.http.rules[0].tiers[0].window=15m");

        assertThat(report).contains("sluice.http.rules[0].count-on (product-api) has 'unauthorized', which is not an"
                + " HTTP status", "Action:", "(4xx), such as count-on: 401, 403.");
    }

    @Test
    void anHttpRuleCountingOnStatusesWithAStoreThatCannotGiveBackIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, KeepingStoreApp.class, "--sluice.http.rules[0].path=/login",
                "--sluice.http.rules[0].count-on=401", "--sluice.http.rules[0].tiers[0].limit=5",
                "--sluice.http.rules[0].tiers[0].window=15m");

        assertThat(report).contains("sluice.http.rules[0].count-on (product-api) needs a store that can give permits"
                + " back", "Action:", "Remove sluice.http.rules[0].count-on to count every request");
    }

    @Test
    void aLimiterConditionThatIsNotSpelIsNamed(CapturedOutput output) {
        String report = failureReport(output, "--sluice.limits[Hello.hello].condition=#user ==");

        assertThat(report).contains("sluice.limits[Hello.hello].condition '#user ==' is not a valid SpEL expression",
                "Action:", "Correct the expression, or remove it to keep the annotation's condition.");
    }

    @Test
    void aDottedLimiterNameWithoutBracketsBeforeConditionIsWrittenWithThem(CapturedOutput output) {
        String report = failureReport(output, "--sluice.limits.Hello.hello.condition=#root != null");

        assertThat(report).contains("splits a limiter name at its dots",
                "Write limiter names that contain dots in brackets: sluice.limits[Hello.hello].condition.");
    }

    @Test
    void aConditionForAnHttpRuleInItsLimitsIsNamed(CapturedOutput output) {
        String report = ruleFailureReport(output, "--sluice.http.rules[0].path=/v1/**",
                "--sluice.http.rules[0].tiers[0].limit=5", "--sluice.http.rules[0].tiers[0].window=1m",
                "--sluice.limits.product-api.condition=#ip != null");

        assertThat(report).contains("sluice.limits.product-api.condition configures the condition of rule"
                + " 'product-api', which has its own", "Action:", "Set the condition in"
                + " sluice.http.rules[0].condition");
    }
}
