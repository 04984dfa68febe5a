package dev.sluice.boot.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.ForwardingRateLimitStore;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Tier;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.aop.LimitOverrides;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.autoconfigure.SluiceConfigurationException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.springframework.expression.BeanResolver;
import org.springframework.http.server.PathContainer;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The condition, key and plan expressions of {@code sluice.http.rules} come from configuration, so
 * they may use what docs/http-rules.md documents ({@code #ip}, {@code #request}, {@code #path},
 * {@code @bean}) and nothing more: no types, no constructors, no reflection. A condition decides
 * whether a rule counts a request at all, and {@code count-on} which of the requests it counted
 * keep their permit once answered.
 */
class RuleExpressionsTest {

    /** A bean the expressions may call. */
    public static class Organizations {

        /**
         * An organization's canonical name.
         *
         * @param org a name as written in the path
         * @return the name in lower case
         */
        public String canonical(String org) {
            return org.toLowerCase(Locale.ROOT);
        }
    }

    private static final BeanResolver BEANS = (context, name) -> {
        if (!name.equals("organizations")) {
            throw new IllegalArgumentException("no bean " + name);
        }
        return new Organizations();
    };

    /** The rules of one rule, {@code catalog} on {@code /catalog/{org}}, with the given key and plan. */
    private static HttpRateLimitRules rules(String key, String plan) {
        return rules(KeyErrorPolicy.REJECT, RateLimiterRegistry.builder().build(), rule -> {
            rule.setKey(key);
            rule.setPlan(plan);
        });
    }

    /** The rules of one rule, {@code catalog} on {@code /catalog/{org}} limited to 3 a minute, as configured. */
    private static HttpRateLimitRules rules(KeyErrorPolicy onKeyError, RateLimiterRegistry registry,
                                            Consumer<SluiceProperties.Rule> configured) {
        SluiceProperties.Rule rule = new SluiceProperties.Rule();
        rule.setName("catalog");
        rule.setPath("/catalog/{org}");
        SluiceProperties.TierProperties tier = new SluiceProperties.TierProperties();
        tier.setLimit(3L);
        tier.setWindow(Duration.ofMinutes(1));
        rule.getTiers().add(tier);
        configured.accept(rule);
        return new HttpRateLimitRules(List.of(rule), LimitOverrides.NONE, registry, onKeyError,
                PathPatternParser.defaultInstance, BEANS);
    }

    /** The rules of one rule with a condition, keyed by the client address. */
    private static HttpRateLimitRules withCondition(String condition, KeyErrorPolicy onKeyError) {
        return rules(onKeyError, RateLimiterRegistry.builder().build(), rule -> {
            rule.setKey("#ip");
            rule.setCondition(condition);
        });
    }

    /** What a request to {@code /catalog/Acme} from 192.0.2.7 with the header X-Tenant: t1 is counted as. */
    private static HttpRateLimitRules.Call call(HttpRateLimitRules rules) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/catalog/Acme");
        request.addHeader("X-Tenant", "t1");
        request.addHeader("X-Plan", "gold");
        return rules.call(rules.rules().get(0), PathContainer.parsePath("/catalog/Acme"), () -> "192.0.2.7", request);
    }

    @Test
    void whatTheReadmeDocumentsKeepsWorking() {
        HttpRateLimitRules rules = rules("#ip + '|' + #request.getHeader('X-Tenant') + '|' + #request.method + '|'"
                + " + #path['org'] + '|' + @organizations.canonical(#path['org'])", "#request.getHeader('X-Plan')");

        HttpRateLimitRules.Call call = call(rules);
        assertThat(call.key()).isEqualTo("192.0.2.7|t1|GET|Acme|acme");
        assertThat(call.plan()).isEqualTo("gold");
        assertThat(call(rules)).as("asked again, with the context's parts built once").isEqualTo(call);
    }

    @Test
    void aTypeReferenceOrAConstructorFailsStartUpNamingTheRule() {
        assertThatThrownBy(() -> rules("T(java.lang.Runtime).getRuntime().availableProcessors()", ""))
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessage("sluice.http.rules[0].key (catalog) 'T(java.lang.Runtime).getRuntime().availableProcessors()'"
                        + " uses T(java.lang.Runtime), which a rule's expression may not");
        assertThatThrownBy(() -> rules("new java.io.File('x').getName()", ""))
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessageStartingWith("sluice.http.rules[0].key (catalog) 'new java.io.File('x').getName()' uses new");
        assertThatThrownBy(() -> rules("#ip", "#path['org'] + T(java.lang.System).getenv('HOME')"))
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessageStartingWith("sluice.http.rules[0].plan (catalog)").hasMessageContaining("T(java.lang.System)");
    }

    @Test
    void reflectionIsRefusedWhenARequestIsCountedAndTheRuleIsNamed() {
        for (String key : List.of("#request.getClass().getClassLoader()", "#request.class.name",
                "#ip.getClass().forName('java.lang.Runtime')", "@organizations.getClass().getName()")) {
            assertThatThrownBy(() -> call(rules(key, ""))).as(key)
                    .isInstanceOf(RateLimitKeyException.class)
                    .hasMessageStartingWith("Rate limit rule 'catalog' cannot count this request: its key expression '"
                            + key + "' failed");
        }
    }

    @Test
    void aConditionDecidesWhetherTheRuleCountsARequestWithTheKeysVariables() {
        HttpRateLimitRules internalLeftOut = withCondition("#request.getHeader('X-Internal') == null", KeyErrorPolicy.REJECT);
        assertThat(call(internalLeftOut)).isEqualTo(new HttpRateLimitRules.Call("192.0.2.7", null));
        MockHttpServletRequest internal = new MockHttpServletRequest("GET", "/catalog/Acme");
        internal.addHeader("X-Internal", "yes");
        assertThat(internalLeftOut.call(internalLeftOut.rules().get(0), PathContainer.parsePath("/catalog/Acme"),
                () -> "192.0.2.7", internal)).as("left out by the condition").isNull();

        HttpRateLimitRules everyVariable = withCondition("#ip == '192.0.2.7' and #path['org'] == 'Acme'"
                + " and @organizations.canonical(#request.getHeader('X-Tenant')) == 't1'", KeyErrorPolicy.REJECT);
        assertThat(call(everyVariable)).isNotNull();
        assertThat(call(withCondition("#path['org'] == 'Other'", KeyErrorPolicy.REJECT))).isNull();
    }

    @Test
    void aConditionThatFailsOrGivesNoBooleanIsTreatedAsAKeyError() {
        Map<String, String> problems = Map.of(
                "#request.getHeader('X-Tenant')", "evaluated to a String, not true or false",
                "#request.getHeader('X-Missing')", "evaluated to null, not true or false",
                "#request.getClass().getName() == 'x'", "failed");
        problems.forEach((condition, problem) -> {
            assertThatThrownBy(() -> call(withCondition(condition, KeyErrorPolicy.REJECT))).as(condition)
                    .isInstanceOf(RateLimitKeyException.class)
                    .hasMessageStartingWith("Rate limit rule 'catalog' cannot count this request: its condition"
                            + " expression '" + condition + "' " + problem)
                    .hasMessageNotContaining("t1");
            assertThat(call(withCondition(condition, KeyErrorPolicy.SKIP))).as(condition).isNull();
            assertThat(call(withCondition(condition, KeyErrorPolicy.SHARED_KEY))).as(condition)
                    .isEqualTo(new HttpRateLimitRules.Call("(key error)", null));
        });
    }

    @Test
    void aConditionNamingATypeOrUnknownVariableFailsStartUpNamingTheRule() {
        assertThatThrownBy(() -> withCondition("T(java.lang.Boolean).TRUE", KeyErrorPolicy.REJECT))
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessage("sluice.http.rules[0].condition (catalog) 'T(java.lang.Boolean).TRUE' uses"
                        + " T(java.lang.Boolean), which a rule's expression may not");
        assertThatThrownBy(() -> withCondition("#internal", KeyErrorPolicy.REJECT))
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessageStartingWith("sluice.http.rules[0].condition (catalog) '#internal' refers to #internal");
        assertThatThrownBy(() -> withCondition("#ip ==", KeyErrorPolicy.REJECT))
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessageStartingWith("sluice.http.rules[0].condition (catalog) '#ip ==' is not a valid SpEL");
    }

    /** An in-memory store that can give back permits, noting those it is given back. */
    static final class GivingBackStore extends ForwardingRateLimitStore {

        final List<String> givenBack = new ArrayList<>();

        GivingBackStore(RateLimitStore store) {
            super(store);
        }

        @Override
        public void giveBack(String key, List<Tier> tiers, long cost, Duration ago) {
            givenBack.add(key + " " + cost + " " + ago);
        }

        @Override
        public CompletionStage<Void> giveBackAsync(String key, List<Tier> tiers, long cost, Duration ago) {
            giveBack(key, tiers, cost, ago);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public boolean givesBack(Tier tier) {
            return true;
        }
    }

    @Test
    void countOnKeepsThePermitsOfTheStatusesAndClassesItListsAndGivesBackTheOthers() {
        MutableClock clock = new MutableClock(Instant.parse("2200-01-01T00:00:00Z"));
        GivingBackStore store = new GivingBackStore(InMemoryRateLimitStore.builder().clock(clock).build());
        HttpRateLimitRules rules = rules(KeyErrorPolicy.REJECT, RateLimiterRegistry.builder().clock(clock).store(store)
                .build(), rule -> {
                    rule.setKey("#path['org']");
                    rule.setCountOn(List.of("401", " 5XX"));
                });
        HttpRateLimitRules.Rule rule = rules.rules().get(0);
        HttpRateLimitRules.Call call = new HttpRateLimitRules.Call("Acme", null);
        rule.limiter().acquire("Acme");
        HttpRateLimitRules.Taken taken = rules.taken(rule, call);
        assertThat(taken).isNotNull();
        assertThat(taken.admittedAt()).isEqualTo(clock.instant());
        clock.advance(Duration.ofMillis(250));

        for (int status : new int[] {401, 500, 503, 599}) {
            rules.giveBack(List.of(taken), status);
        }
        assertThat(store.givenBack).as("counted statuses").isEmpty();
        for (int status : new int[] {200, 204, 302, 400, 403, 404, 429}) {
            rules.giveBack(List.of(taken), status);
        }
        assertThat(store.givenBack).hasSize(7).allSatisfy(givenBack -> assertThat(givenBack)
                .isEqualTo("catalog:Acme 1 PT0.25S"));
    }

    @Test
    void withoutCountOnEveryRequestKeepsItsPermit() {
        GivingBackStore store = new GivingBackStore(InMemoryRateLimitStore.builder().build());
        HttpRateLimitRules rules = rules(KeyErrorPolicy.REJECT, RateLimiterRegistry.builder().store(store).build(),
                rule -> rule.setCountOn(List.of()));
        assertThat(rules.taken(rules.rules().get(0), new HttpRateLimitRules.Call("", null))).isNull();
    }

    @Test
    void countOnThatIsNotAStatusOrWithAStoreThatCannotGiveBackFailsStartUpNamingTheRule() {
        RateLimiterRegistry givingBack = RateLimiterRegistry.builder()
                .store(new GivingBackStore(InMemoryRateLimitStore.builder().build())).build();
        for (String status : List.of("4x1", "600", "099", "40", "4xxx", "unauthorized")) {
            assertThatThrownBy(() -> rules(KeyErrorPolicy.REJECT, givingBack, rule -> {
                rule.setName("catalog-" + status);
                rule.setCountOn(List.of("401", status));
            })).as(status)
                    .isInstanceOf(SluiceConfigurationException.class)
                    .hasMessage("sluice.http.rules[0].count-on (catalog-" + status + ") has '" + status + "', which is"
                            + " not an HTTP status");
        }

        RateLimiterRegistry keeping = RateLimiterRegistry.builder()
                .store(new KeepingStore(InMemoryRateLimitStore.builder().build())).build();
        assertThatThrownBy(() -> rules(KeyErrorPolicy.REJECT, keeping, rule -> rule.setCountOn(List.of("401"))))
                .isInstanceOf(SluiceConfigurationException.class)
                .hasMessage("sluice.http.rules[0].count-on (catalog) needs a store that can give permits back, and"
                        + " KeepingStore cannot for the rule's tiers");
    }

    /** A store that decides as the in-memory one but cannot give permits back, as the Bucket4j store. */
    static final class KeepingStore implements RateLimitStore {

        private final RateLimitStore store;

        KeepingStore(RateLimitStore store) {
            this.store = store;
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            return store.tryAcquire(key, tiers, cost);
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            return store.tryAcquireAsync(key, tiers, cost);
        }
    }
}
