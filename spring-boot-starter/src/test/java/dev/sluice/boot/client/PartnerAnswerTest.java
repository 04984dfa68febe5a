package dev.sluice.boot.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.sluice.boot.client.PartnerAnswer.Quota;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.http.HttpHeaders;
import org.springframework.util.LinkedMultiValueMap;

/**
 * {@link PartnerAnswer#read}: the pause and quotas a partner's response asks for, and the notes on
 * what it said that was passed over. Every answer is compared whole, so a stray note or quota
 * fails a case as surely as a wrong pause.
 */
class PartnerAnswerTest {

    /** Our clock: Sunday, 1 June 2025, noon. */
    private static final Instant NOW = Instant.parse("2025-06-01T12:00:00Z");

    /** A ceiling no case reaches but the ones about the ceiling: two centuries. */
    private static final Duration HIGH_CEILING = Duration.ofDays(73_050);

    /** Header fields as name, value, name, value...; a name given twice is a field in two lines. */
    private static List<String> fields(String... namesAndValues) {
        return List.of(namesAndValues);
    }

    private static HttpHeaders headers(List<String> fields) {
        HttpHeaders headers = new HttpHeaders();
        for (int i = 0; i < fields.size(); i += 2) {
            headers.add(fields.get(i), fields.get(i + 1));
        }
        return headers;
    }

    private static PartnerAnswer read(int status, List<String> fields) {
        return PartnerAnswer.read(status, headers(fields), NOW, HIGH_CEILING);
    }

    /** The answer expected: a pause of {@code seconds} ({@code null}: none), the quotas, the notes. */
    private static PartnerAnswer answer(@Nullable Long seconds, List<Quota> quotas, String... ignored) {
        return new PartnerAnswer(seconds == null ? null : Duration.ofSeconds(seconds), quotas, Arrays.asList(ignored));
    }

    private static PartnerAnswer pause(@Nullable Long seconds, String... ignored) {
        return answer(seconds, List.of(), ignored);
    }

    private static Quota quota(long limit, long windowSeconds) {
        return new Quota(limit, Duration.ofSeconds(windowSeconds));
    }

    // Retry-After

    static Stream<Arguments> retryAfterAnswers() {
        return Stream.of(
                arguments("delta-seconds", fields("Retry-After", "120"), pause(120L)),
                arguments("delta-seconds with leading zeros", fields("Retry-After", "007"), pause(7L)),
                arguments("delta-seconds between spaces", fields("Retry-After", " 120 "), pause(120L)),
                arguments("zero delta-seconds", fields("Retry-After", "0"), pause(null)),
                arguments("fifteen digits", fields("Retry-After", "000000000000120"),
                        pause(120L)),
                arguments("IMF-fixdate, no Date", fields("Retry-After", "Sun, 01 Jun 2025 12:01:30 GMT"),
                        pause(90L)),
                arguments("IMF-fixdate after the partner's Date, whose clock is 30 s behind ours",
                        fields("Date", "Sun, 01 Jun 2025 11:59:30 GMT",
                                "Retry-After", "Sun, 01 Jun 2025 12:01:00 GMT"), pause(90L)),
                arguments("IMF-fixdate in the past", fields("Retry-After", "Sun, 01 Jun 2025 11:59:00 GMT"),
                        pause(null)),
                arguments("IMF-fixdate ahead of our clock but past by the partner's Date",
                        fields("Date", "Sun, 01 Jun 2025 12:05:00 GMT",
                                "Retry-After", "Sun, 01 Jun 2025 12:01:00 GMT"), pause(null)),
                arguments("IMF-fixdate with a leap second", fields("Retry-After", "Sun, 01 Jun 2025 12:00:60 GMT"),
                        pause(60L)),
                arguments("RFC 850 date", fields("Retry-After", "Sunday, 01-Jun-25 12:02:00 GMT"), pause(120L)),
                arguments("RFC 850 date, year 50 years ahead", fields("Retry-After", "Saturday, 01-Jun-75 12:00:00 GMT"),
                        pause(1_577_836_800L)),
                arguments("RFC 850 date, year more than 50 years ahead: a century earlier",
                        fields("Retry-After", "Thursday, 01-Jun-95 12:00:00 GMT"), pause(null)),
                arguments("asctime date, one-digit day", fields("Retry-After", "Sun Jun  1 12:02:00 2025"),
                        pause(120L)),
                arguments("asctime date, two-digit day", fields("Retry-After", "Tue Jun 10 12:00:00 2025"),
                        pause(9 * 86_400L)),
                arguments("Date in an obsolete format", fields("Date", "Sunday, 01-Jun-25 11:59:30 GMT",
                        "Retry-After", "Sun, 01 Jun 2025 12:01:00 GMT"), pause(90L)),
                arguments("an invalid Date: our clock instead", fields("Date", "yesterday",
                        "Retry-After", "Sun, 01 Jun 2025 12:01:00 GMT"),
                        pause(60L, "Date: not an HTTP-date, so our clock is used")),
                arguments("Date in several lines that disagree: our clock instead",
                        fields("Date", "Sun, 01 Jun 2025 11:59:30 GMT", "Date", "Sun, 01 Jun 2025 11:59:00 GMT",
                                "Retry-After", "Sun, 01 Jun 2025 12:01:00 GMT"),
                        pause(60L, "Date: several lines that disagree")),
                arguments("an invalid Date beside delta-seconds, which need none",
                        fields("Date", "yesterday", "Retry-After", "120"), pause(120L)),
                arguments("several lines that agree", fields("Retry-After", "120", "Retry-After", "120"),
                        pause(120L)),
                arguments("several lines that disagree", fields("Retry-After", "120", "Retry-After", "60"),
                        pause(null, "Retry-After: several lines that disagree")),
                arguments("field name in lower case", fields("retry-after", "120"), pause(120L)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("retryAfterAnswers")
    void retryAfterIsReadOn429(String description, List<String> fields, PartnerAnswer expected) {
        assertThat(read(429, fields)).isEqualTo(expected);
    }

    @Test
    void retryAfterIsReadOn503() {
        assertThat(read(503, fields("Retry-After", "120"))).isEqualTo(pause(120L));
    }

    @ParameterizedTest
    @ValueSource(ints = {200, 204, 301, 400, 500})
    void retryAfterIsNotReadOnOtherStatuses(int status) {
        assertThat(read(status, fields("Retry-After", "120"))).isEqualTo(PartnerAnswer.NOTHING);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "abc", "-5", "+5", "1.5", "1e3", "120 seconds", "120, 120", "0x10",
            "1234567890123456", "99999999999999999999", "Sun, 01 Jun 2025 12:01:30 UTC",
            "Sun, 01 Jun 2025 12:01:30 +0000", "Sun, 1 Jun 2025 12:01:30 GMT", "sun, 01 jun 2025 12:01:30 GMT",
            "01 Jun 2025 12:01:30 GMT", "2025-06-01T12:01:30Z", "Sat, 31 Feb 2026 12:00:00 GMT",
            "Sun, 01 Jun 2025 24:00:00 GMT", "Sun, 01 Jun 2025 12:00:61 GMT", "Sunday, 01-Jun-2025 12:02:00 GMT",
            "Sun Jun 1 12:02:00 2025"})
    void aMalformedRetryAfterIsIgnored(String value) {
        assertThat(read(429, fields("Retry-After", value)))
                .isEqualTo(pause(null, "Retry-After: not delta-seconds or an HTTP-date"));
    }


    // RateLimit

    static Stream<Arguments> rateLimitAnswers() {
        return Stream.of(
                arguments("Token", fields("RateLimit", "burst;r=0;t=30"), pause(30L)),
                arguments("String", fields("RateLimit", "\"burst\";r=0;t=30"), pause(30L)),
                arguments("quota left", fields("RateLimit", "burst;r=5;t=30"), pause(null)),
                arguments("r=0 and t=0", fields("RateLimit", "burst;r=0;t=0"), pause(null)),
                arguments("r=0 without t, which is optional", fields("RateLimit", "burst;r=0"), pause(null)),
                arguments("several members: the longest", fields("RateLimit", "a;r=0;t=10, b;r=0;t=40, c;r=3;t=90"),
                        pause(40L)),
                arguments("several lines, combined", fields("RateLimit", "a;r=0;t=10", "RateLimit", "b;r=0;t=40"),
                        pause(40L)),
                arguments("other parameters", fields("RateLimit", "a;r=0;t=20;pk=:AQI=:;x=\"y\";z=1.5"), pause(20L)),
                arguments("empty", fields("RateLimit", ""), pause(null)),
                arguments("a Token naming a policy given as a String",
                        fields("RateLimit-Policy", "\"burst\";q=10;w=60", "RateLimit", "burst;r=0;t=30"),
                        answer(30L, List.of(quota(10, 60)))),
                arguments("r equal to its policy's q", fields("RateLimit-Policy", "a;q=10;w=60",
                        "RateLimit", "a;r=10;t=60"), answer(null, List.of(quota(10, 60)))),
                arguments("naming no policy given", fields("RateLimit-Policy", "a;q=10;w=60",
                        "RateLimit", "b;r=0;t=60"), answer(60L, List.of(quota(10, 60)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rateLimitAnswers")
    void rateLimitIsReadOnAnyStatus(String description, List<String> fields, PartnerAnswer expected) {
        assertThat(read(200, fields)).isEqualTo(expected);
        assertThat(read(429, fields)).isEqualTo(expected);
    }

    static Stream<Arguments> malformedRateLimits() {
        String ok = ", ok;r=0;t=5";
        String notAList = "RateLimit: not an RFC 9651 List";
        return Stream.of(
                arguments("a;r=-1;t=50" + ok, pause(5L, "RateLimit: \"a\" without a non-negative Integer r")),
                arguments("a;t=50" + ok, pause(5L, "RateLimit: \"a\" without a non-negative Integer r")),
                arguments("a;r=\"0\";t=50" + ok, pause(5L, "RateLimit: \"a\" without a non-negative Integer r")),
                arguments("a;r=0.0;t=50" + ok, pause(5L, "RateLimit: \"a\" without a non-negative Integer r")),
                arguments("a;r;t=50" + ok, pause(5L, "RateLimit: \"a\" without a non-negative Integer r")),
                arguments("a;r=0;t=-50" + ok, pause(5L, "RateLimit: \"a\" with t not a non-negative Integer")),
                arguments("a;r=0;t=1.5" + ok, pause(5L, "RateLimit: \"a\" with t not a non-negative Integer")),
                arguments("a;r=0;t=\"50\"" + ok, pause(5L, "RateLimit: \"a\" with t not a non-negative Integer")),
                arguments("a;r=0;t=fifty" + ok, pause(5L, "RateLimit: \"a\" with t not a non-negative Integer")),
                arguments("7;r=0;t=50" + ok, pause(5L, "RateLimit: a member that is not a String or a Token")),
                arguments("(a b);r=0;t=50" + ok, pause(5L, "RateLimit: a member that is not a String or a Token")),
                arguments("a;r=0;t=1234567890123456" + ok, pause(null, notAList)),
                arguments("a;r=0;t=50," + ok, pause(null, notAList)),
                arguments("a;r=0;t=50 b" + ok, pause(null, notAList)),
                arguments("a;r=0;t=(" + ok, pause(null, notAList)),
                arguments("\"caf\u00e9\";r=0;t=50" + ok, pause(null, notAList)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedRateLimits")
    void aMalformedRateLimitMemberOrFieldIsIgnored(String value, PartnerAnswer expected) {
        assertThat(read(200, fields("RateLimit", value))).isEqualTo(expected);
    }

    static Stream<Arguments> contradictions() {
        String twice = "RateLimit-Policy: \"a\" given twice with different q or w";
        return Stream.of(
                arguments("r above its policy's q", fields("RateLimit-Policy", "a;q=10;w=60, b;q=100;w=3600",
                        "RateLimit", "a;r=11;t=50, b;r=0;t=20"),
                        answer(20L, List.of(quota(100, 3600)), "RateLimit: \"a\" has r above its policy's q")),
                arguments("r above q: the policy's t is passed over too",
                        fields("RateLimit-Policy", "a;q=10;w=60", "RateLimit", "a;r=11;t=5, a;r=0;t=50"),
                        pause(null, "RateLimit: \"a\" has r above its policy's q")),
                arguments("a policy given twice with different q", fields(
                        "RateLimit-Policy", "a;q=10;w=60, b;q=5;w=1, \"a\";q=20;w=60"),
                        answer(null, List.of(quota(5, 1)), twice)),
                arguments("a policy given twice with different w", fields(
                        "RateLimit-Policy", "a;q=10;w=60", "RateLimit-Policy", "a;q=10;w=3600"),
                        answer(null, List.of(), twice)),
                arguments("a policy given twice alike", fields("RateLimit-Policy", "a;q=10;w=60, a;q=10;w=60"),
                        answer(null, List.of(quota(10, 60)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contradictions")
    void contradictionsAreIgnored(String description, List<String> fields, PartnerAnswer expected) {
        assertThat(read(200, fields)).isEqualTo(expected);
    }


    // RateLimit-Policy

    static Stream<Arguments> policyQuotas() {
        return Stream.of(
                arguments("Token", "burst;q=100;w=60", List.of(quota(100, 60))),
                arguments("String", "\"burst\";q=100;w=60", List.of(quota(100, 60))),
                arguments("in the partner's order", "daily;q=1000;w=86400, burst;q=100;w=60",
                        List.of(quota(1000, 86_400), quota(100, 60))),
                arguments("other parameters", "a;q=10;w=60;qu=\"requests\";pk=:AQI=:", List.of(quota(10, 60))),
                arguments("without w: no window known", "a;q=10, b;q=5;w=1", List.of(quota(5, 1))),
                arguments("empty", "", List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policyQuotas")
    void rateLimitPolicyStatesQuotas(String description, String value, List<Quota> expected) {
        assertThat(read(200, fields("RateLimit-Policy", value))).isEqualTo(answer(null, expected));
    }

    @Test
    void severalRateLimitPolicyLinesAreCombinedInOrder() {
        assertThat(read(200, fields("RateLimit-Policy", "b;q=5;w=1", "RateLimit-Policy", "a;q=10;w=60")))
                .isEqualTo(answer(null, List.of(quota(5, 1), quota(10, 60))));
    }

    static Stream<Arguments> malformedRateLimitPolicies() {
        String ok = ", ok;q=1;w=1";
        String noQ = "RateLimit-Policy: \"a\" without a positive Integer q";
        String noW = "RateLimit-Policy: \"a\" with w not a positive Integer";
        List<Quota> okQuota = List.of(quota(1, 1));
        return Stream.of(
                arguments("a;q=0;w=60" + ok, answer(null, okQuota, noQ)),
                arguments("a;q=-5;w=60" + ok, answer(null, okQuota, noQ)),
                arguments("a;q=\"5\";w=60" + ok, answer(null, okQuota, noQ)),
                arguments("a;q=1.5;w=60" + ok, answer(null, okQuota, noQ)),
                arguments("a;w=60" + ok, answer(null, okQuota, noQ)),
                arguments("a;q=5;w=0" + ok, answer(null, okQuota, noW)),
                arguments("a;q=5;w=-60" + ok, answer(null, okQuota, noW)),
                arguments("a;q=5;w=1.5" + ok, answer(null, okQuota, noW)),
                arguments("a;q=5;w=\"60\"" + ok, answer(null, okQuota, noW)),
                arguments("7;q=5;w=60" + ok,
                        answer(null, okQuota, "RateLimit-Policy: a member that is not a String or a Token")),
                arguments("a;q=1234567890123456;w=60" + ok,
                        answer(null, List.of(), "RateLimit-Policy: not an RFC 9651 List")),
                arguments("a;q=5;w=60;" + ok, answer(null, List.of(), "RateLimit-Policy: not an RFC 9651 List")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedRateLimitPolicies")
    void aMalformedRateLimitPolicyMemberOrFieldIsIgnored(String value, PartnerAnswer expected) {
        assertThat(read(200, fields("RateLimit-Policy", value))).isEqualTo(expected);
    }


    // X-RateLimit-*

    static Stream<Arguments> xRateLimitAnswers() {
        long inNinetySeconds = NOW.getEpochSecond() + 90;
        return Stream.of(
                arguments("reset in seconds", fields("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "30"),
                        pause(30L)),
                arguments("reset in epoch seconds", fields("X-RateLimit-Remaining", "0",
                        "X-RateLimit-Reset", String.valueOf(inNinetySeconds)), pause(90L)),
                arguments("reset in epoch seconds, after the partner's Date, whose clock is 30 s ahead of ours",
                        fields("Date", "Sun, 01 Jun 2025 12:00:30 GMT", "X-RateLimit-Remaining", "0",
                                "X-RateLimit-Reset", String.valueOf(inNinetySeconds)), pause(60L)),
                arguments("reset in epoch seconds, with an invalid Date", fields("Date", "soon",
                                "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", String.valueOf(inNinetySeconds)),
                        pause(90L, "Date: not an HTTP-date, so our clock is used")),
                arguments("reset in epoch seconds, past", fields("X-RateLimit-Remaining", "0",
                        "X-RateLimit-Reset", String.valueOf(NOW.getEpochSecond() - 1)), pause(null)),
                arguments("999,999,999: still seconds", fields("X-RateLimit-Remaining", "0",
                        "X-RateLimit-Reset", "999999999"), pause(999_999_999L)),
                arguments("1,000,000,000: epoch seconds, long past", fields("X-RateLimit-Remaining", "0",
                        "X-RateLimit-Reset", "1000000000"), pause(null)),
                arguments("reset 0", fields("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "0"), pause(null)),
                arguments("calls remaining", fields("X-RateLimit-Remaining", "5", "X-RateLimit-Reset", "30"),
                        pause(null)),
                arguments("no reset", fields("X-RateLimit-Remaining", "0"), pause(null)),
                arguments("no remaining", fields("X-RateLimit-Reset", "30"), pause(null)),
                arguments("a limit", fields("X-RateLimit-Limit", "100"),
                        answer(null, List.of(new Quota(100, null)))),
                arguments("all three", fields("X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "0",
                        "X-RateLimit-Reset", "30"), answer(30L, List.of(new Quota(100, null)))),
                arguments("remaining equal to the limit", fields("X-RateLimit-Limit", "100",
                        "X-RateLimit-Remaining", "100"), answer(null, List.of(new Quota(100, null)))),
                arguments("field names in lower case", fields("x-ratelimit-limit", "100", "x-ratelimit-remaining",
                        "0", "x-ratelimit-reset", "30"), answer(30L, List.of(new Quota(100, null)))),
                arguments("after RateLimit-Policy's quotas, whatever the order of the fields",
                        fields("X-RateLimit-Limit", "100", "RateLimit-Policy", "a;q=10;w=60"),
                        answer(null, List.of(quota(10, 60), new Quota(100, null)))),
                arguments("remaining above the limit", fields("X-RateLimit-Limit", "10",
                                "X-RateLimit-Remaining", "11", "X-RateLimit-Reset", "30"),
                        pause(null, "X-RateLimit-Remaining: above X-RateLimit-Limit")),
                arguments("a zero limit", fields("X-RateLimit-Limit", "0", "X-RateLimit-Remaining", "0",
                        "X-RateLimit-Reset", "30"), pause(30L, "X-RateLimit-Limit: zero")),
                arguments("several lines that disagree", fields("X-RateLimit-Remaining", "0",
                                "X-RateLimit-Remaining", "5", "X-RateLimit-Reset", "30"),
                        pause(null, "X-RateLimit-Remaining: several lines that disagree")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("xRateLimitAnswers")
    void xRateLimitFieldsAreReadOnAnyStatus(String description, List<String> fields, PartnerAnswer expected) {
        assertThat(read(200, fields)).isEqualTo(expected);
        assertThat(read(429, fields)).isEqualTo(expected);
    }

    static Stream<Arguments> malformedXRateLimitFields() {
        return Stream.of("", "abc", "-1", "+1", "1.5", "1e3", "0x10", "5, 5", "1234567890123456",
                "99999999999999999999").flatMap(value -> Stream.of(
                arguments("X-RateLimit-Remaining", value, fields("X-RateLimit-Limit", "100",
                                "X-RateLimit-Remaining", value, "X-RateLimit-Reset", "30"),
                        answer(null, List.of(new Quota(100, null)),
                                "X-RateLimit-Remaining: not a non-negative integer")),
                arguments("X-RateLimit-Reset", value, fields("X-RateLimit-Limit", "100",
                                "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", value),
                        answer(null, List.of(new Quota(100, null)), "X-RateLimit-Reset: not a non-negative integer")),
                arguments("X-RateLimit-Limit", value, fields("X-RateLimit-Limit", value,
                                "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "30"),
                        pause(30L, "X-RateLimit-Limit: not a non-negative integer"))));
    }

    @ParameterizedTest(name = "{0}: \"{1}\"")
    @MethodSource("malformedXRateLimitFields")
    void aMalformedXRateLimitFieldIsIgnoredAlone(String field, String value, List<String> fields, PartnerAnswer expected) {
        assertThat(read(200, fields)).isEqualTo(expected);
    }


    // All fields together

    @ParameterizedTest(name = "Retry-After {0} s, RateLimit t={1}, X-RateLimit-Reset {2}: {3} s")
    @MethodSource
    void theLongestPauseWins(long retryAfter, long rateLimitReset, long xReset, long expected) {
        assertThat(read(429, fields("Retry-After", String.valueOf(retryAfter),
                "RateLimit", "a;r=0;t=" + rateLimitReset,
                "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", String.valueOf(xReset))))
                .isEqualTo(pause(expected));
    }

    static Stream<Arguments> theLongestPauseWins() {
        return Stream.of(arguments(120L, 90L, 60L, 120L), arguments(30L, 90L, 60L, 90L), arguments(30L, 60L, 90L, 90L));
    }

    @Test
    void malformedFieldsDoNotSpoilTheOthers() {
        assertThat(read(429, fields("Retry-After", "120", "RateLimit", "a;r=0;t=(",
                "RateLimit-Policy", "a;q=10;w=60", "X-RateLimit-Remaining", "none", "X-RateLimit-Reset", "600")))
                .isEqualTo(answer(120L, List.of(quota(10, 60)), "RateLimit: not an RFC 9651 List",
                        "X-RateLimit-Remaining: not a non-negative integer"));
    }

    @Test
    void theCeilingCapsThePause() {
        HttpHeaders twoHours = headers(fields("Retry-After", "7200", "RateLimit", "a;r=0;t=10800"));

        assertThat(PartnerAnswer.read(429, twoHours, NOW, Duration.ofHours(1)))
                .isEqualTo(new PartnerAnswer(Duration.ofHours(1), List.of(), List.of()));
        assertThat(PartnerAnswer.read(429, twoHours, NOW, Duration.ofHours(4)))
                .isEqualTo(new PartnerAnswer(Duration.ofHours(3), List.of(), List.of()));
        assertThat(PartnerAnswer.read(429, twoHours, NOW, Duration.ZERO)).isEqualTo(PartnerAnswer.NOTHING);
    }

    @Test
    void noFieldsSayNothing() {
        assertThat(read(429, fields("Content-Type", "application/json"))).isEqualTo(PartnerAnswer.NOTHING);
    }

    @Test
    void notesQuoteAtMost40CharactersOfANameFromOutside() {
        String name = "n".repeat(40) + "SECRET".repeat(50);

        PartnerAnswer answer = read(200, fields("RateLimit-Policy", name + ";q=0;w=60"));

        assertThat(answer.ignored()).containsExactly(
                "RateLimit-Policy: \"" + "n".repeat(40) + "...\" without a positive Integer q");
    }

    @Test
    void anUnexpectedFailureSaysNothingButThat() {
        HttpHeaders failing = new HttpHeaders(new LinkedMultiValueMap<>() {
            @Override
            public @Nullable List<String> get(Object headerName) {
                throw new IllegalStateException("headers already released");
            }
        });

        assertThat(PartnerAnswer.read(429, failing, NOW, HIGH_CEILING)).isEqualTo(
                new PartnerAnswer(null, List.of(), List.of("rate-limit fields unreadable: IllegalStateException")));
    }
}
