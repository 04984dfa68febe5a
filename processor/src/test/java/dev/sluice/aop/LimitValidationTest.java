package dev.sluice.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.InMemoryRateLimitStore;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiterRegistry;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.annotation.Algorithm;
import dev.sluice.annotation.FailurePolicy;
import dev.sluice.annotation.KeyErrorPolicy;
import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every mistake in an annotation is refused at parse time, naming the class, method and attribute. */
class LimitValidationTest {

    private final MethodRateLimiter limits = MethodRateLimiter.builder().build();

    static class NonPositiveLimit {
        @RateLimited(limit = 0, window = "1m")
        public void call() {
        }
    }

    static class UnknownWindowUnit {
        @RateLimited(limit = 5, window = "10x")
        public void call() {
        }
    }

    static class SubMillisecondWindow {
        @RateLimited(limit = 5, window = "500us")
        public void call() {
        }
    }

    static class OnlyLimit {
        @RateLimited(limit = 5)
        public void call() {
        }
    }

    static class NoLimitAnywhere {
        @RateLimited
        public void call() {
        }
    }

    static class ZeroCost {
        @RateLimited(limit = 5, window = "1m", cost = "0")
        public void call() {
        }
    }

    static class CostAboveLimit {
        @RateLimited(limit = 5, window = "1m", cost = "6")
        public void call() {
        }
    }

    static class MaxWaitWithoutWait {
        @RateLimited(limit = 5, window = "1m", maxWait = "5s")
        public void call() {
        }
    }

    static class UnparsableKey {
        @RateLimited(key = "#user.", limit = 5, window = "1m")
        public void call(String user) {
        }
    }

    static class UnknownParameter {
        @RateLimited(key = "#phone", limit = 5, window = "1m")
        public void call(String user) {
        }
    }

    static class UnknownParameterInCost {
        @RateLimited(limit = 5, window = "1m", cost = "#items.size()")
        public void call(String user) {
        }
    }

    static class UnresolvablePlaceholder {
        @RateLimited(limit = 5, window = "${no.such.window}")
        public void call() {
        }
    }

    static class BadBlockFor {
        @RateLimited(limit = 5, window = "1m", blockFor = "forever")
        public void call() {
        }
    }

    static class NegativeMaxWait {
        @RateLimited(limit = 5, window = "1m", onLimit = OnLimit.WAIT, maxWait = "-1s")
        public void call() {
        }
    }

    static class DuplicateTier {
        @RateLimited(key = "#user", limit = 5, window = "1m")
        @RateLimited(key = "#user", limit = 9, window = "60s")
        public void call(String user) {
        }
    }

    static class OneNameTwoKeys {
        @RateLimited(name = "otp", key = "#a", limit = 5, window = "1m")
        @RateLimited(name = "otp", key = "#b", limit = 9, window = "1h")
        public void call(String a, String b) {
        }
    }

    static class TiersDisagreeOnOnLimit {
        @RateLimited(limit = 5, window = "1m", onLimit = OnLimit.WAIT, maxWait = "1s")
        @RateLimited(limit = 9, window = "1h", maxWait = "2s")
        public void call() {
        }
    }

    static class TwoFailurePolicies {
        @RateLimited(limit = 5, window = "1m", onStoreFailure = {FailurePolicy.FAIL_OPEN, FailurePolicy.FAIL_CLOSED})
        public void call() {
        }
    }

    static class TiersDisagreeOnTheFailurePolicy {
        @RateLimited(limit = 5, window = "1m", onStoreFailure = FailurePolicy.FAIL_OPEN)
        @RateLimited(limit = 9, window = "1h", onStoreFailure = FailurePolicy.FAIL_CLOSED)
        public void call() {
        }
    }

    static class MaxWaitBeyondAnyClock {
        @RateLimited(limit = 5, window = "1m", onLimit = OnLimit.WAIT, maxWait = "106751991167300d")
        public void call() {
        }
    }

    static class NameWithALineBreak {
        @RateLimited(name = "otp\r\nX-Injected: 1", limit = 5, window = "1m")
        public void call() {
        }
    }

    static class NameBeyondAscii {
        @RateLimited(name = "caf\u00e9", limit = 5, window = "1m")
        public void call() {
        }
    }

    static class Caf\u00e9 {
        @RateLimited(limit = 5, window = "1m")
        public void call() {
        }
    }

    static class MisspelledMethodOfAString {
        @RateLimited(key = "#user.toLowerCas()", limit = 5, window = "1m")
        public void call(String user) {
        }
    }

    /** A request as a record: its components are read as properties. */
    record Request(String phone, Team sender) {
    }

    /** A class whose members are known: a getter and a public field. */
    static class Team {
        public String team = "ops";

        public String getEmail() {
            return "ops@example.com";
        }
    }

    static class MisspelledPropertyOfARecord {
        @RateLimited(key = "#req.phon", limit = 5, window = "1m")
        public void call(Request req) {
        }
    }

    static class MisspelledPropertyDownAChain {
        @RateLimited(key = "#p0.sender().emial", limit = 5, window = "1m")
        public void call(Request req) {
        }
    }

    static class MisspelledMethodInACost {
        @RateLimited(limit = 5, window = "1m", cost = "#items.sizee()")
        public void call(java.util.ArrayList<String> items) {
        }
    }

    static class LimitAndLimitString {
        @RateLimited(limit = 5, limitString = "5", window = "1m")
        public void call() {
        }
    }

    static class LimitStringNotANumber {
        @RateLimited(limitString = "${limits.missing:five}", window = "1m")
        public void call() {
        }
    }

    static class TwoKeyErrorPolicies {
        @RateLimited(limit = 5, window = "1m", onKeyError = {KeyErrorPolicy.REJECT, KeyErrorPolicy.SKIP})
        public void call() {
        }
    }

    static class NonPositiveConcurrency {
        @RateLimited(concurrency = 0)
        public void call() {
        }
    }

    static class LeaseWithoutConcurrency {
        @RateLimited(limit = 5, window = "1m", lease = "10s")
        public void call() {
        }
    }

    static class ConcurrencyAsAnAlgorithm {
        @RateLimited(limit = 5, window = "1m", algorithm = Algorithm.CONCURRENCY)
        public void call() {
        }
    }

    static class TwoConcurrencies {
        @RateLimited(concurrency = 2)
        @RateLimited(concurrency = 3, lease = "5s")
        public void call() {
        }
    }

    static Object[][] mistakes() {
        return new Object[][] {
            {NonPositiveLimit.class, "limit must be positive, was 0"},
            {UnknownWindowUnit.class, "window '10x' is not a duration: use a whole number with a unit"},
            {SubMillisecondWindow.class, "tier 5 per '500us' is out of range: window must be whole milliseconds"},
            {OnlyLimit.class, "window is missing: set both limit and window"},
            {NoLimitAnywhere.class, "no tiers are configured for limiter 'NoLimitAnywhere.call'"},
            {ZeroCost.class, "cost must be from 1 to the smallest limit (5), was 0"},
            {CostAboveLimit.class, "cost must be from 1 to the smallest limit (5), was 6"},
            {MaxWaitWithoutWait.class, "maxWait applies only with onLimit WAIT"},
            {UnparsableKey.class, "key '#user.' is not a valid SpEL expression"},
            {UnknownParameter.class, "key '#phone' refers to #phone, which is not a parameter of the method"},
            {UnknownParameterInCost.class, "cost '#items.size()' refers to #items"},
            {UnresolvablePlaceholder.class, "window '${no.such.window}' has a placeholder that cannot be resolved"},
            {BadBlockFor.class, "blockFor 'forever' is not a duration"},
            {NegativeMaxWait.class, "maxWait '-1s' is negative"},
            {DuplicateTier.class, "two tiers share algorithm and window"},
            {OneNameTwoKeys.class, "name 'otp' is given to tiers with different keys ('#a' and '#b')"},
            {TiersDisagreeOnOnLimit.class, "maxWait differs between tiers of one limiter ('1s' and '2s')"},
            {TwoFailurePolicies.class, "onStoreFailure gives [FAIL_OPEN, FAIL_CLOSED]; give one policy, or none"},
            {TiersDisagreeOnTheFailurePolicy.class, "onStoreFailure differs between tiers of one limiter"
                    + " ('[FAIL_OPEN]' and '[FAIL_CLOSED]')"},
            {MaxWaitBeyondAnyClock.class, "maxWait must be at most 2^52 ms"},
            {NameWithALineBreak.class, "name 'otp\\u000d\\u000aX-Injected: 1' has U+000D at index 3"},
            {NameBeyondAscii.class, "name 'caf\u00e9' has U+00E9 at index 3"},
            {Caf\u00e9.class, "it is the default name, made of the class and method names: give the limiter a name"},
            {MisspelledMethodOfAString.class, "key '#user.toLowerCas()' calls toLowerCas() with 0 arguments, which no"
                    + " public method of java.lang.String takes"},
            {MisspelledPropertyOfARecord.class, "key '#req.phon' reads property 'phon' of " + Request.class.getName()
                    + ", which has no such property"},
            {MisspelledPropertyDownAChain.class, "reads property 'emial' of " + Team.class.getName()},
            {MisspelledMethodInACost.class, "cost '#items.sizee()' calls sizee()"},
            {LimitAndLimitString.class, "limitString is given with limit (5); give one of them"},
            {LimitStringNotANumber.class, "limitString 'five' is not a whole number"},
            {TwoKeyErrorPolicies.class, "onKeyError gives [REJECT, SKIP]; give one policy"},
            {NonPositiveConcurrency.class, "concurrency must be positive, was 0"},
            {LeaseWithoutConcurrency.class, "lease is given without concurrency"},
            {ConcurrencyAsAnAlgorithm.class, "algorithm is CONCURRENCY; declare a limit on calls running at once with"
                    + " concurrency = N"},
            {TwoConcurrencies.class, "two concurrency tiers"},
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mistakes")
    void refusesTheMistakeNamingClassMethodAndAttribute(Class<?> type, String problem) {
        assertThatThrownBy(() -> limits.validate(type))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + type.getName() + ".call(")
                .hasMessageContaining(problem);
    }

    static class TwoKeysWithoutNames {
        @RateLimited(key = "#a", limit = 5, window = "1m")
        @RateLimited(key = "#b", limit = 9, window = "1m")
        public void call(String a, String b) {
        }
    }

    static class MembersThatExistOrCannotBeKnown {
        @RateLimited(name = "a", key = "#req.phone + #req.sender.team + #req.sender().email + #user.toLowerCase()",
                limit = 5, window = "1m")
        @RateLimited(name = "b", key = "#items.anything() + #byName.anyKey + #any.whatever + #p0.phone.length()",
                limit = 5, window = "1m")
        public void call(Request req, String user, List<String> items, java.util.Map<String, String> byName,
                         Object any) {
        }
    }

    @Test
    void acceptsMembersThatExistAndThoseOnlyTheRunTimeCanTell() {
        assertThatCode(() -> limits.validate(MembersThatExistOrCannotBeKnown.class)).doesNotThrowAnyException();
    }

    @Test
    void acceptsTiersOfDifferentKeysWithDefaultNames() {
        assertThatCode(() -> limits.validate(TwoKeysWithoutNames.class)).doesNotThrowAnyException();
    }

    static class Same {
        static class Limited {
            @RateLimited(limit = 1, window = "1m")
            public void send() {
            }
        }
    }

    static class Other {
        static class Limited {
            @RateLimited(limit = 1, window = "1m")
            public void send() {
            }
        }
    }

    @Test
    void refusesTwoClassesWhoseDefaultNamesWouldShareCounters() {
        limits.validate(Same.Limited.class);
        assertThatThrownBy(() -> limits.validate(Other.Limited.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageContaining("name defaults to 'Limited.send', as it does for " + Same.Limited.class.getName());
    }

    static class Overloaded {
        @RateLimited(limit = 1, window = "1m")
        public void send(String to) {
        }

        @RateLimited(limit = 100, window = "1h")
        public void send(String to, int copies) {
        }
    }

    @Test
    void namesOverloadedMethodsWithTheirParameterTypes() throws Exception {
        assertThat(limits.limitersFor(Overloaded.class.getMethod("send", String.class), Overloaded.class))
                .extracting(RateLimiter::name).containsExactly("Overloaded.send(String)");
        assertThat(limits.limitersFor(Overloaded.class.getMethod("send", String.class, int.class), Overloaded.class))
                .extracting(RateLimiter::name).containsExactly("Overloaded.send(String,int)");
    }

    @Test
    void resolvesPlaceholdersInNamesBeforeCheckingThem() {
        MethodRateLimiter resolving = MethodRateLimiter.builder()
                .placeholders(text -> text.replace("${otp.name}", "otp\nsend"))
                .build();
        assertThatThrownBy(() -> resolving.validate(PlaceholderName.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + PlaceholderName.class.getName() + ".call()")
                .hasMessageContaining("name 'otp\\u000asend' has U+000A at index 3");
    }

    static class PlaceholderName {
        @RateLimited(name = "${otp.name}", limit = 5, window = "1m")
        public void call() {
        }
    }

    interface Sender {
        void send(String to);
    }

    static class SmsSender implements Sender {
        @Override
        @RateLimited(limit = 1, window = "1m")
        public void send(String to) {
        }
    }

    interface Channel<T> {
        void send(T message);
    }

    static class PushChannel implements Channel<String> {
        @Override
        @RateLimited(limit = 1, window = "1m")
        public void send(String message) {
        }
    }

    abstract static class Notifier<T> {
        public abstract void send(T message);
    }

    static class MailNotifier extends Notifier<String> {
        @Override
        @RateLimited(limit = 1, window = "1m")
        public void send(String message) {
        }
    }

    @Test
    void namesAMethodByItsClassAndItsOverloadsAloneWhateverItImplementsOrOverrides() throws Exception {
        assertThat(limits.limitersFor(SmsSender.class.getMethod("send", String.class), SmsSender.class))
                .extracting(RateLimiter::name).containsExactly("SmsSender.send");
        assertThat(limits.limitersFor(PushChannel.class.getMethod("send", String.class), PushChannel.class))
                .extracting(RateLimiter::name).containsExactly("PushChannel.send");
        assertThat(limits.limitersFor(MailNotifier.class.getMethod("send", String.class), MailNotifier.class))
                .extracting(RateLimiter::name).containsExactly("MailNotifier.send");
    }

    /** A store that keeps only token buckets, as the distributed Bucket4j store does. */
    static class TokenBucketsOnly implements RateLimitStore {
        private final RateLimitStore counts = InMemoryRateLimitStore.builder().build();

        @Override
        public Set<Algorithm> supportedAlgorithms() {
            return Set.of(Algorithm.TOKEN_BUCKET);
        }

        @Override
        public Decision tryAcquire(String key, List<Tier> tiers, long cost) {
            RateLimitStore.check(this, key, tiers, cost);
            return counts.tryAcquire(key, tiers, cost);
        }

        @Override
        public CompletionStage<Decision> tryAcquireAsync(String key, List<Tier> tiers, long cost) {
            RateLimitStore.check(this, key, tiers, cost);
            return counts.tryAcquireAsync(key, tiers, cost);
        }
    }

    static class SlidingWindow {
        @RateLimited(limit = 5, window = "1m")
        public void call() {
        }
    }

    @Test
    void refusesATierTheStoreCannotHonour() {
        MethodRateLimiter tokenBuckets = MethodRateLimiter.builder()
                .registry(RateLimiterRegistry.builder().store(new TokenBucketsOnly()).build()).build();
        assertThatThrownBy(() -> tokenBuckets.validate(SlidingWindow.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageStartingWith("Invalid @RateLimited on " + SlidingWindow.class.getName() + ".call()")
                .hasMessageContaining("TokenBucketsOnly does not support")
                .hasMessageContaining("SLIDING_WINDOW")
                .hasMessageContaining("it supports [TOKEN_BUCKET]");
    }

    interface Mailer {
        @RateLimited(limit = 1, window = "1m")
        void send(String to);
    }

    static class SmtpMailer implements Mailer {
        @Override
        public void send(String to) {
        }
    }

    @Test
    void refusesAnnotationsOnInterfaceMethodsWhichTheAspectWouldNeverApply() {
        assertThatThrownBy(() -> limits.validate(SmtpMailer.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageContaining(Mailer.class.getName() + ".send(String)")
                .hasMessageContaining("is on an interface method")
                .hasMessageContaining("annotate the implementation instead");
    }

    @Retention(RetentionPolicy.RUNTIME)
    @RateLimited(limit = 1, window = "1m")
    @interface OneAMinute {
    }

    @Retention(RetentionPolicy.RUNTIME)
    @OneAMinute
    @interface Strict {
    }

    static class TwoLevelsDeep {
        @Strict
        public void call() {
        }
    }

    @Test
    void refusesLimitsMoreThanOneComposedAnnotationDeep() {
        assertThatThrownBy(() -> limits.validate(TwoLevelsDeep.class))
                .isInstanceOf(RateLimitConfigurationException.class)
                .hasMessageContaining("is reached through 2 levels of composed annotations");
    }

    @RateLimited(limit = 1, window = "1m")
    static class LimitedBase {
        public void inherited() {
        }
    }

    static class UnlimitedSubclass extends LimitedBase {
        public void own() {
        }
    }

    @Test
    void aClassAnnotationCoversTheMethodsItsClassDeclaresAsThePointcutDoes() throws Exception {
        assertThat(limits.limitersFor(LimitedBase.class.getMethod("inherited"), UnlimitedSubclass.class)).hasSize(1);
        assertThat(limits.limitersFor(UnlimitedSubclass.class.getMethod("own"), UnlimitedSubclass.class)).isEmpty();
    }
}
