package dev.sluice.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.Sleeper;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.boot.actuate.RateLimitsEndpoint;
import dev.sluice.tck.ClockAdvancingSleeper;
import dev.sluice.tck.MutableClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.test.util.ReflectionTestUtils;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.util.DefaultUriBuilderFactory;

/**
 * Client rules on the {@code RestClient} and {@code RestTemplate} Spring Boot builds, against a
 * partner on loopback that counts arrivals by the test's clock; waits move that clock, so
 * nothing here sleeps.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClientRulesTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2031-03-01T00:00:00Z"));
    private final PartnerStub partner = PartnerStub.start(clock);
    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

    @AfterEach
    void stop() {
        apps.forEach(ConfigurableApplicationContext::close);
        partner.close();
    }

    /** An application with one client rule for the partner: 5 calls a second, and {@code more} settings. */
    private ConfigurableApplicationContext start(String... more) {
        return start(ClientApp.class, more);
    }

    private ConfigurableApplicationContext start(Class<?> application, String... more) {
        ConfigurableApplicationContext app = start(application, clock, partner, more);
        apps.add(app);
        return app;
    }

    /**
     * An application with one client rule for {@code partner}, 5 calls a second, and {@code more}
     * settings, whose waits move {@code clock}; the caller closes it.
     */
    static ConfigurableApplicationContext start(Class<?> application, MutableClock clock, PartnerStub partner,
                                                String... more) {
        List<String> properties = new ArrayList<>(List.of(
                "sluice.client.rules[0].name=partner",
                "sluice.client.rules[0].host=127.0.0.1:" + partner.port(),
                "sluice.client.rules[0].tiers[0].limit=5",
                "sluice.client.rules[0].tiers[0].window=1s"));
        properties.addAll(List.of(more));
        return new SpringApplicationBuilder(application)
                .web(WebApplicationType.NONE)
                .initializers(context -> context.getBeanFactory().registerSingleton("clock", clock))
                .properties(properties.toArray(String[]::new))
                // Not the application.yml of the module's other test applications.
                .run("--spring.config.name=client-rules");
    }

    private RestClient restClient(ConfigurableApplicationContext app) {
        return app.getBean(RestClient.Builder.class).baseUrl(partner.url()).build();
    }

    private static void call(RestClient client, String path) {
        client.get().uri(path).retrieve().toBodilessEntity();
    }

    @Test
    void aPermitCountsFromThePartnersAnswerSoTheTimeARequestTravelsCannotBreakThePartnersWindow() {
        RestClient client = restClient(start());
        // The first request travels 300 ms (a cold connection), the next ones none.
        partner.beforeCounting(arrival -> {
            if (arrival == 0) {
                clock.advanceMillis(300);
            }
        });
        Instant start = clock.instant();
        for (int i = 0; i < 11; i++) {
            call(client, "/quotes/" + i);
        }

        List<Instant> arrivals = partner.arrivals();
        assertThat(partner.mostWithin(Duration.ofSeconds(1))).as("arrivals within any second of the partner's")
                .isEqualTo(5);
        // Counted from when it was sent, the first call would have let the sixth in at 1 s, within
        // a second of the first call's arrival at 300 ms.
        assertThat(Duration.between(start, arrivals.get(5))).isEqualTo(Duration.ofMillis(1300));
        assertThat(Duration.between(start, arrivals.get(10))).isEqualTo(Duration.ofMillis(2300));
    }

    @Test
    void rulesMatchTheirHostPortPathAndMethodsOnly() {
        ConfigurableApplicationContext app = start(
                "sluice.client.rules[0].path=/quotes/**",
                "sluice.client.rules[0].methods=GET",
                "sluice.client.rules[0].on-limit=reject");
        RestClient client = restClient(app);
        for (int i = 0; i < 5; i++) {
            call(client, "/quotes/" + i);
        }
        assertThatThrownBy(() -> call(client, "/quotes/6")).isInstanceOf(RateLimitExceededException.class);
        // Another path, another method, another host: not the rule's.
        call(client, "/accounts/1");
        client.post().uri("/quotes/7").retrieve().toBodilessEntity();
        app.getBean(RestClient.Builder.class).baseUrl("http://localhost:" + partner.port()).build()
                .get().uri("/quotes/8").retrieve().toBodilessEntity();
        assertThat(partner.arrivals()).hasSize(8);
    }

    @Test
    void aKeyExpressionCountsEachKeyApart() {
        RestClient client = restClient(start(
                "sluice.client.rules[0].path=/accounts/{account}/**",
                "sluice.client.rules[0].key=#path['account']",
                "sluice.client.rules[0].on-limit=reject"));
        for (int i = 0; i < 5; i++) {
            call(client, "/accounts/a/quotes");
            call(client, "/accounts/b/quotes");
        }
        assertThatThrownBy(() -> call(client, "/accounts/a/quotes")).isInstanceOf(RateLimitExceededException.class);
        assertThat(partner.arrivals()).hasSize(10);
    }

    @Test
    void restTemplatesFromTheBuilderAreLimitedToo() {
        ConfigurableApplicationContext app = start("sluice.client.rules[0].on-limit=reject");
        // Spring Boot's RestTemplateBuilder, whose package differs between Spring Boot 3.5 and 4.
        RestTemplate template = (RestTemplate) ReflectionTestUtils.invokeMethod(app.getBean("restTemplateBuilder"),
                "build");
        template.setUriTemplateHandler(new DefaultUriBuilderFactory(partner.url()));
        for (int i = 0; i < 5; i++) {
            template.getForEntity("/quotes/{i}", String.class, i);
        }
        assertThatThrownBy(() -> template.getForEntity("/quotes/6", String.class))
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(partner.arrivals()).hasSize(5);
    }

    @Test
    void aRetryAfterPausesTheRuleSoWaitingCallsReachThePartnerOnlyOnceItIsOver() {
        RestClient client = restClient(start());
        partner.answerNext(429, Map.of("Retry-After", "3"));
        Instant refused = clock.instant();
        assertThatThrownBy(() -> call(client, "/quotes/1")).hasMessageContaining("429");

        call(client, "/quotes/2");

        assertThat(partner.arrivals()).hasSize(2);
        assertThat(Duration.between(refused, partner.arrivals().get(1))).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void callersWaitingWithPermitsATokenBucketReservedObeyAPauseThatCameMeanwhile() throws InterruptedException {
        ConfigurableApplicationContext app = start(InLineApp.class,
                "sluice.client.rules[0].tiers[0].algorithm=token-bucket", "sluice.client.rules[0].max-wait=10s");
        InLineSleeper line = app.getBean(InLineSleeper.class);
        RestClient client = restClient(app);
        for (int i = 0; i < 5; i++) {
            call(client, "/quotes/" + i);
        }
        // Four callers take the permits the bucket refills, 200 ms apart, and wait for them.
        ExecutorService callers = Executors.newFixedThreadPool(4);
        List<Future<Object>> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String path = "/quotes/waiting-" + i;
            waiting.add(callers.submit(() -> {
                call(client, path);
                return path;
            }));
            line.awaitSleeping(i + 1);
        }
        partner.answerNext(429, Map.of("Retry-After", "3"));
        try {
            // The first, due at 200 ms, gets the 429 before the next is due; the three others, due at 400 to
            // 800 ms, must wait out its 3 s.
            line.wakeEarliest();
            assertThatThrownBy(() -> waiting.get(0).get(30, TimeUnit.SECONDS)).hasMessageContaining("429");
            line.runUntil(waiting);
        } finally {
            callers.shutdownNow();
        }

        List<Instant> arrivals = partner.arrivals();
        assertThat(arrivals).hasSize(9);
        Instant refused = arrivals.get(5);
        assertThat(arrivals.subList(6, 9)).as("arrivals after the 429 at " + refused)
                .allSatisfy(arrival -> assertThat(arrival).isAfterOrEqualTo(refused.plusSeconds(3)));
    }

    @Test
    void duringAPauseACallThatMustNotWaitFailsWithThePartnersRetryAfter() {
        ConfigurableApplicationContext app = start("sluice.client.rules[0].on-limit=reject");
        RestClient client = restClient(app);
        partner.answerNext(503, Map.of("Retry-After", "120"));
        assertThatThrownBy(() -> call(client, "/quotes/1")).hasMessageContaining("503");
        clock.advance(Duration.ofSeconds(20));

        assertThatThrownBy(() -> call(client, "/quotes/2"))
                .isInstanceOfSatisfying(RateLimitExceededException.class,
                        rejected -> assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(100)));
        assertThat(partner.arrivals()).hasSize(1);
        assertThat(app.getBean(MeterRegistry.class).get("sluice.client.partner.signals").tag("rule", "partner")
                .tag("signal", "pause").counter().count()).isEqualTo(1);
    }

    @Test
    void noPauseIsLongerThanTheCeiling() {
        ConfigurableApplicationContext app = start("sluice.client.rules[0].on-limit=reject",
                "sluice.client.max-pause=10s");
        RestClient client = restClient(app);
        partner.answerNext(429, Map.of("Retry-After", "86400"));
        assertThatThrownBy(() -> call(client, "/quotes/1")).hasMessageContaining("429");

        assertThatThrownBy(() -> call(client, "/quotes/2"))
                .isInstanceOfSatisfying(RateLimitExceededException.class,
                        rejected -> assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(10)));
        clock.advance(Duration.ofSeconds(10));
        call(client, "/quotes/3");
        assertThat(partner.arrivals()).hasSize(2);
    }

    @Test
    void aLowerQuotaThePartnerStatesIsFollowedUntilItStatesAnotherAndNeverRaisedAboveTheRules() {
        ConfigurableApplicationContext app = start();
        RestClient client = restClient(app);
        partner.answerAlwaysWith(Map.of("RateLimit-Policy", "\"quotes\";q=3;w=1"));
        for (int i = 0; i < 9; i++) {
            call(client, "/quotes/" + i);
        }
        // The first answer told the rule; from then on, 3 in any second.
        assertThat(partner.mostWithin(Duration.ofSeconds(1))).isEqualTo(3);
        RateLimiterRegistry registry = app.getBean(RateLimiterRegistry.class);
        assertThat(registry.find("partner").orElseThrow().tiers().get(0).limit()).isEqualTo(3);

        partner.answerAlwaysWith(Map.of("RateLimit-Policy", "\"quotes\";q=50;w=1"));
        call(client, "/quotes/again");
        assertThat(registry.find("partner").orElseThrow().tiers().get(0).limit()).as("never above the rule's").isEqualTo(5);
        assertThat(app.getBean(MeterRegistry.class).get("sluice.client.partner.signals").tag("signal", "quota")
                .counter().count()).isEqualTo(2);
    }

    @Test
    void aLiveChangeKeepsTheRulesOwnTiersAsWhatTakingItBackRestoresWhateverThePartnerLowered() {
        ConfigurableApplicationContext app = start("management.endpoints.web.exposure.include=ratelimits",
                "management.endpoint.ratelimits.access=unrestricted");
        RestClient client = restClient(app);
        RateLimiter rule = app.getBean(RateLimiterRegistry.class).find("partner").orElseThrow();
        partner.answerAlwaysWith(Map.of("X-RateLimit-Limit", "2"));
        call(client, "/quotes/1");
        assertThat(rule.tiers()).as("lowered by the partner").containsExactly(Tier.of(2, Duration.ofSeconds(1),
                Algorithm.SLIDING_LOG));

        RateLimitsEndpoint endpoint = app.getBean(RateLimitsEndpoint.class);
        RateLimitsEndpoint.LimiterDescriptor changed = endpoint.change("partner", null, "100", "1m", null, null,
                null, SecurityContext.NONE);
        assertThat(changed.change().configuredTiers()).singleElement()
                .satisfies(tier -> assertThat(tier.limit()).as("the rule's own limit").isEqualTo(5));

        assertThat(endpoint.revert("partner")).isTrue();
        partner.answerAlwaysWith(Map.of("X-RateLimit-Limit", "50"));
        clock.advance(Duration.ofSeconds(1));
        call(client, "/quotes/2");
        assertThat(rule.tiers()).as("back to the rule's own, which the partner's 50 does not raise")
                .containsExactly(Tier.of(5, Duration.ofSeconds(1), Algorithm.SLIDING_LOG));
    }

    /**
     * One answer stating one call per 127 years would hold the rule for as long, and the rule,
     * refusing every call, would never hear the partner again: a quota longer than the longest
     * pause is passed over, and one answer adds at most four tiers.
     */
    @Test
    void aQuotaLongerThanTheLongestPauseIsPassedOverAndOneAnswerAddsAtMostFourTiers() {
        ConfigurableApplicationContext app = start("sluice.client.rules[0].on-limit=reject",
                "sluice.client.max-pause=10s");
        RestClient client = restClient(app);
        partner.answerNext(200, Map.of("RateLimit-Policy", "\"p\";q=1;w=4000000000"));
        call(client, "/quotes/1");
        for (int i = 2; i <= 5; i++) {
            call(client, "/quotes/" + i);
        }
        RateLimiterRegistry registry = app.getBean(RateLimiterRegistry.class);
        assertThat(registry.find("partner").orElseThrow().tiers()).as("the rule's tiers").hasSize(1);

        partner.answerNext(200, Map.of("RateLimit-Policy",
                "\"a\";q=100;w=2, \"b\";q=100;w=3, \"c\";q=100;w=4, \"d\";q=100;w=5, \"e\";q=100;w=6"));
        clock.advance(Duration.ofSeconds(1));
        call(client, "/quotes/6");
        assertThat(registry.find("partner").orElseThrow().tiers()).as("the rule's tiers and four added").hasSize(5);
        assertThat(app.getBean(MeterRegistry.class).get("sluice.client.partner.signals").tag("signal", "ignored")
                .counter().count()).isEqualTo(2);
    }

    /**
     * A quota the partner stated holds while it states it again; stated no more, it lapses once
     * the longest pause has passed, even while it refuses every call so that the partner is not
     * asked.
     */
    @Test
    void aStatedQuotaLapsesOnceThePartnerStopsStatingIt() {
        ConfigurableApplicationContext app = start("sluice.client.rules[0].on-limit=reject",
                "sluice.client.max-pause=10s");
        RestClient client = restClient(app);
        partner.answerNext(200, Map.of("RateLimit-Policy", "\"p\";q=1;w=10"));
        call(client, "/quotes/1");
        // The stated quota is a tier of its own from the answer on: one call in it, then none.
        call(client, "/quotes/2");
        assertThatThrownBy(() -> call(client, "/quotes/3")).isInstanceOf(RateLimitExceededException.class);

        clock.advance(Duration.ofSeconds(9));
        assertThatThrownBy(() -> call(client, "/quotes/4")).as("the stated quota, 9 s on")
                .isInstanceOf(RateLimitExceededException.class);
        clock.advance(Duration.ofSeconds(1));
        for (int i = 5; i < 10; i++) {
            call(client, "/quotes/" + i);
        }
        RateLimiterRegistry registry = app.getBean(RateLimiterRegistry.class);
        assertThat(registry.find("partner").orElseThrow().tiers()).as("the configured tiers again")
                .extracting(tier -> tier.limit()).containsExactly(5L);
        assertThat(partner.arrivals()).hasSize(7);
    }

    @Test
    void whatThePartnerSendsThatCannotBeReadIsIgnoredAndCounted() {
        ConfigurableApplicationContext app = start("sluice.client.rules[0].on-limit=reject");
        RestClient client = restClient(app);
        partner.answerNext(429, Map.of("Retry-After", "soon"));
        assertThatThrownBy(() -> call(client, "/quotes/1")).hasMessageContaining("429");

        call(client, "/quotes/2");
        assertThat(partner.arrivals()).hasSize(2);
        assertThat(app.getBean(MeterRegistry.class).get("sluice.client.partner.signals").tag("signal", "ignored")
                .counter().count()).isEqualTo(1);
    }

    @Test
    void withoutAdaptTheRuleIgnoresThePartnersAnswers() {
        RestClient client = restClient(start("sluice.client.rules[0].adapt=false",
                "sluice.client.rules[0].on-limit=reject"));
        partner.answerNext(429, Map.of("Retry-After", "3"));
        assertThatThrownBy(() -> call(client, "/quotes/1")).hasMessageContaining("429");
        call(client, "/quotes/2");
        assertThat(partner.arrivals()).hasSize(2);
    }

    /** The application: Spring Boot's clients, Sluice, metrics; the test's clock moves as calls wait. */
    /**
     * Blocking sleeps on the test's clock, woken one at a time, earliest first, each once the
     * caller woken before it has sent its request or gone back to sleep: as real time runs when
     * answers come back before the next caller is due.
     */
    static final class InLineSleeper implements Sleeper {

        private final MutableClock clock;
        private final PriorityQueue<Sleep> sleeping = new PriorityQueue<>();

        private record Sleep(Instant until, CountDownLatch woken) implements Comparable<Sleep> {
            @Override
            public int compareTo(Sleep other) {
                return until.compareTo(other.until);
            }
        }

        InLineSleeper(MutableClock clock) {
            this.clock = clock;
        }

        @Override
        public void sleep(Duration duration) {
            Sleep sleep = new Sleep(clock.instant().plus(duration), new CountDownLatch(1));
            synchronized (this) {
                sleeping.add(sleep);
                notifyAll();
            }
            try {
                sleep.woken.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public CompletionStage<Void> sleepAsync(Duration duration) {
            throw new AssertionError("RestClient waits on the calling thread");
        }

        synchronized void awaitSleeping(int callers) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (sleeping.size() < callers) {
                assertThat(System.nanoTime()).as("callers asleep after 30 s").isLessThan(deadline);
                wait(100);
            }
        }

        /** Wakes the earliest sleeper, moving the clock to its time, once one sleeps. */
        void wakeEarliest() throws InterruptedException {
            Sleep next;
            synchronized (this) {
                awaitSleeping(1);
                next = sleeping.poll();
            }
            if (next.until.isAfter(clock.instant())) {
                clock.set(next.until);
            }
            next.woken.countDown();
        }

        /** Wakes sleepers, earliest first, until every caller has finished. */
        void runUntil(List<? extends Future<?>> callers) throws InterruptedException {
            while (!callers.stream().allMatch(Future::isDone)) {
                boolean anyone;
                synchronized (this) {
                    anyone = !sleeping.isEmpty();
                    if (!anyone) {
                        // Callers are between sleeps, on their own threads.
                        wait(10);
                    }
                }
                if (anyone) {
                    wakeEarliest();
                }
            }
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class InLineApp {

        @Bean
        InLineSleeper sleeper(MutableClock clock) {
            return new InLineSleeper(clock);
        }

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ClientApp {

        @Bean
        Sleeper sleeper(MutableClock clock) {
            return new ClockAdvancingSleeper(clock);
        }

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }
}
