package dev.sluice.boot.client;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parameters;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.greenbytes.http.sfv.TokenItem;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;

/**
 * What a partner's response says about its limits: how long to pause before calling it again,
 * the quotas it states, and what it said that could not be used. Outbound client rules read it
 * after each response; {@link #read} is a pure function of the response and the caller's clock,
 * and never throws.
 *
 * <p>The fields read:
 * <ul>
 *   <li>{@code Retry-After}, on statuses 429 and 503 only: delta-seconds, or an HTTP-date in any of
 *       the three formats RFC 9110 has recipients accept (IMF-fixdate, RFC 850, asctime). A date
 *       is taken relative to the response's own {@code Date}, when that is a valid HTTP-date, since
 *       the partner's clock may differ from ours; otherwise relative to the caller's clock.
 *   <li>{@code RateLimit} and {@code RateLimit-Policy} of draft-ietf-httpapi-ratelimit-headers,
 *       on any status: RFC 9651 Lists whose members, Strings or Tokens, name policies. A
 *       {@code RateLimit} member with {@code r=0} asks for a pause of its {@code t} seconds; a
 *       {@code RateLimit-Policy} member states a quota of {@code q} per {@code w} seconds, and is
 *       passed over without its {@code w}, since its window is then unknown.
 *   <li>{@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset},
 *       on any status: a remaining of 0 asks for a pause until the reset, which is seconds from
 *       now, or Unix epoch seconds from 1,000,000,000 on, taken relative to the response's
 *       {@code Date} as {@code Retry-After}'s dates are. The limit states a quota without a window.
 * </ul>
 *
 * <p>Headers come from outside, so each field is judged on its own: a malformed, negative, zero
 * (for quotas and windows), too long (more than 15 digits) or contradictory value is passed over,
 * as are a quota whose window is longer than the longest pause (the partner could otherwise hold
 * a rule for as long as it likes) and quotas past the first four,
 * with one short note in {@link #ignored()} that names the field but never quotes more than a
 * policy's name, cut to 40 characters. A date or reset already past is no pause, and no mistake.
 * Contradictions are: {@code Retry-After}, {@code Date} or an {@code X-RateLimit-*} field given in
 * several lines that disagree; a {@code RateLimit} member whose {@code r} exceeds the {@code q}
 * of the policy of its name (that policy's quota and its pause are passed over); one policy
 * name given twice with different {@code q} or {@code w} (both are passed over); and an
 * {@code X-RateLimit-Remaining} above {@code X-RateLimit-Limit} (all three are passed over).
 *
 * @param pause   the longest pause any field asks for, capped at the caller's ceiling; {@code null}
 *                when none asks for one
 * @param quotas  the quotas stated, in the partner's order: {@code RateLimit-Policy}'s, then
 *                {@code X-RateLimit-Limit}'s
 * @param ignored a short note for each thing said that was passed over
 */
record PartnerAnswer(@Nullable Duration pause, List<Quota> quotas, List<String> ignored) {

    private static final System.Logger LOGGER = System.getLogger(PartnerAnswer.class.getName());

    /** Whether an unexpected failure was logged as a warning; later ones are logged for debugging. */
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    /** An answer that says nothing. */
    static final PartnerAnswer NOTHING = new PartnerAnswer(null, List.of(), List.of());

    /** Resets from this many seconds on are Unix epoch seconds (September 2001), not seconds from now. */
    private static final long EPOCH_RESETS = 1_000_000_000L;

    /** The most digits of a number read; RFC 9651 allows no more in an Integer. */
    private static final int MOST_DIGITS = 15;

    /**
     * The most quotas of one answer followed: each may become a tier of the rule, and an answer
     * may name any number of policies.
     */
    private static final int MOST_QUOTAS = 4;

    /** The most characters of a policy's name a note quotes. */
    private static final int MOST_QUOTED = 40;

    private static final String DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
    private static final String MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
    private static final String TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})";
    /** {@code Sun, 06 Nov 1994 08:49:37 GMT}: day, month, year, hour, minute, second. */
    private static final Pattern IMF_FIXDATE = Pattern.compile(
            DAY + ", ([0-9]{2}) " + MONTH + " ([0-9]{4}) " + TIME + " GMT");
    /** {@code Sunday, 06-Nov-94 08:49:37 GMT}: day, month, two-digit year, hour, minute, second. */
    private static final Pattern RFC_850_DATE = Pattern.compile(
            "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-" + MONTH + "-([0-9]{2}) "
                    + TIME + " GMT");
    /** {@code Sun Nov  6 08:49:37 1994}: month, day, hour, minute, second, year. */
    private static final Pattern ASCTIME_DATE = Pattern.compile(
            DAY + " " + MONTH + " ([0-9]{2}| [0-9]) " + TIME + " ([0-9]{4})");
    private static final List<String> MONTHS = List.of(
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec");

    PartnerAnswer {
        quotas = List.copyOf(quotas);
        ignored = List.copyOf(ignored);
    }

    /**
     * A quota the partner states.
     *
     * @param limit  the calls the quota allows, at least 1
     * @param window the window they are allowed in; {@code null} when the field gives none
     *               ({@code X-RateLimit-Limit})
     */
    record Quota(long limit, @Nullable Duration window) {
    }

    /**
     * Reads what a response says about the partner's limits.
     *
     * @param status  the response status code
     * @param headers the response headers; several lines of one field are several values
     * @param now     the caller's clock now, for HTTP dates
     * @param ceiling the longest pause ever returned: a longer one asked for is cut to it, without
     *                a note; a ceiling of zero or less means no pause
     * @return the answer; {@link #NOTHING} with one note if reading failed unexpectedly
     */
    static PartnerAnswer read(int status, HttpHeaders headers, Instant now, Duration ceiling) {
        try {
            Reading reading = new Reading(headers, now);
            if (status == 429 || status == 503) {
                reading.retryAfter();
            }
            reading.rateLimit();
            reading.xRateLimit();
            return reading.answer(ceiling);
        } catch (RuntimeException e) {
            System.Logger.Level level = WARNED.compareAndSet(false, true) ? System.Logger.Level.WARNING
                    : System.Logger.Level.DEBUG;
            LOGGER.log(level, "Could not read a partner's rate-limit fields; the response is taken to say nothing"
                    + " about its limits", e);
            return new PartnerAnswer(null, List.of(),
                    List.of("rate-limit fields unreadable: " + e.getClass().getSimpleName()));
        }
    }

    /**
     * An HTTP-date of RFC 9110: IMF-fixdate, or one of the two obsolete formats recipients must
     * accept. A two-digit RFC 850 year is the one within 50 years of {@code now}, a year more
     * than 50 years ahead being taken a century earlier, as RFC 9110 asks. The day name is
     * checked for its form, not against the date.
     *
     * @param value a field value, without surrounding whitespace
     * @param now   the caller's clock now, for two-digit years
     * @return the instant, or {@code null} if {@code value} is not an HTTP-date
     */
    private static @Nullable Instant httpDate(String value, Instant now) {
        try {
            Matcher imf = IMF_FIXDATE.matcher(value);
            if (imf.matches()) {
                return instant(number(imf.group(3)), imf.group(2), number(imf.group(1)), imf, 4);
            }
            Matcher rfc850 = RFC_850_DATE.matcher(value);
            if (rfc850.matches()) {
                int thisYear = now.atOffset(ZoneOffset.UTC).getYear();
                int year = thisYear - Math.floorMod(thisYear - number(rfc850.group(3)), 100);
                if (year + 100 - thisYear <= 50) {
                    year += 100;
                }
                return instant(year, rfc850.group(2), number(rfc850.group(1)), rfc850, 4);
            }
            Matcher asctime = ASCTIME_DATE.matcher(value);
            if (asctime.matches()) {
                return instant(number(asctime.group(6)), asctime.group(1), number(asctime.group(2).strip()),
                        asctime, 3);
            }
        } catch (DateTimeException e) {
            // 31 Feb, 25:00:00 and the like: not a date.
        }
        return null;
    }

    /**
     * The instant of a date whose time of day is in three groups of {@code matcher}, from
     * {@code hourGroup} on; second 60, a leap second, is the next minute's first.
     */
    private static @Nullable Instant instant(int year, String month, int day, Matcher matcher, int hourGroup) {
        int hour = number(matcher.group(hourGroup));
        int minute = number(matcher.group(hourGroup + 1));
        int second = number(matcher.group(hourGroup + 2));
        if (second > 60) {
            return null;
        }
        LocalDateTime time = LocalDateTime.of(year, MONTHS.indexOf(month) + 1, day, hour, minute, Math.min(second, 59));
        return time.toInstant(ZoneOffset.UTC).plusSeconds(second == 60 ? 1 : 0);
    }

    /** A number of at most a few ASCII digits, already matched. */
    private static int number(String digits) {
        return Integer.parseInt(digits);
    }

    /**
     * One response being read: the pause and quotas found so far, and the notes. Not for sharing
     * between threads.
     */
    private static final class Reading {

        private final HttpHeaders headers;
        private final Instant now;
        private final List<Quota> quotas = new ArrayList<>();
        private final List<String> ignored = new ArrayList<>();
        private Duration longest = Duration.ZERO;
        /** The response's {@code Date}, once looked at; {@code null} when absent or invalid. */
        private @Nullable Instant date;
        private boolean dateRead;

        Reading(HttpHeaders headers, Instant now) {
            this.headers = headers;
            this.now = now;
        }

        /** {@code Retry-After}: delta-seconds or an HTTP-date. */
        void retryAfter() {
            String value = single(HttpHeaders.RETRY_AFTER);
            if (value == null) {
                return;
            }
            Long seconds = digits(value);
            if (seconds != null) {
                pause(Duration.ofSeconds(seconds));
                return;
            }
            Instant at = httpDate(value, now);
            if (at == null) {
                ignore(HttpHeaders.RETRY_AFTER + ": not delta-seconds or an HTTP-date");
                return;
            }
            pause(Duration.between(partnerNow(), at));
        }

        /** {@code RateLimit-Policy} and {@code RateLimit}, which refer to each other by policy name. */
        void rateLimit() {
            Map<String, Policy> policies = new LinkedHashMap<>();
            Set<String> contradictory = new HashSet<>();
            for (Member member : members("RateLimit-Policy")) {
                Long quota = positive(member.parameters.get("q"));
                if (quota == null) {
                    ignore("RateLimit-Policy: " + quoted(member.name) + " without a positive Integer q");
                    continue;
                }
                Long window = null;
                if (member.parameters.containsKey("w")) {
                    window = positive(member.parameters.get("w"));
                    if (window == null) {
                        ignore("RateLimit-Policy: " + quoted(member.name) + " with w not a positive Integer");
                        continue;
                    }
                }
                Policy policy = new Policy(quota, window);
                Policy earlier = policies.putIfAbsent(member.name, policy);
                if (earlier != null && !earlier.equals(policy) && contradictory.add(member.name)) {
                    ignore("RateLimit-Policy: " + quoted(member.name) + " given twice with different q or w");
                }
            }
            List<Limit> limits = new ArrayList<>();
            for (Member member : members("RateLimit")) {
                Long remaining = nonNegative(member.parameters.get("r"));
                if (remaining == null) {
                    ignore("RateLimit: " + quoted(member.name) + " without a non-negative Integer r");
                    continue;
                }
                Long reset = null;
                if (member.parameters.containsKey("t")) {
                    reset = nonNegative(member.parameters.get("t"));
                    if (reset == null) {
                        ignore("RateLimit: " + quoted(member.name) + " with t not a non-negative Integer");
                        continue;
                    }
                }
                limits.add(new Limit(member.name, remaining, reset));
            }
            Set<String> overQuota = new LinkedHashSet<>();
            for (Limit limit : limits) {
                Policy policy = policies.get(limit.name);
                if (policy != null && !contradictory.contains(limit.name) && limit.remaining > policy.quota
                        && overQuota.add(limit.name)) {
                    ignore("RateLimit: " + quoted(limit.name) + " has r above its policy's q");
                }
            }
            for (Limit limit : limits) {
                if (!overQuota.contains(limit.name) && limit.remaining == 0 && limit.reset != null) {
                    pause(Duration.ofSeconds(limit.reset));
                }
            }
            policies.forEach((name, policy) -> {
                if (policy.window != null && !contradictory.contains(name) && !overQuota.contains(name)) {
                    quotas.add(new Quota(policy.quota, Duration.ofSeconds(policy.window)));
                }
            });
        }

        /** {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset}. */
        void xRateLimit() {
            Long limit = plainNumber("X-RateLimit-Limit");
            Long remaining = plainNumber("X-RateLimit-Remaining");
            Long reset = plainNumber("X-RateLimit-Reset");
            if (limit != null && limit == 0) {
                ignore("X-RateLimit-Limit: zero");
                limit = null;
            }
            if (limit != null && remaining != null && remaining > limit) {
                ignore("X-RateLimit-Remaining: above X-RateLimit-Limit");
                return;
            }
            if (limit != null) {
                quotas.add(new Quota(limit, null));
            }
            if (remaining != null && remaining == 0 && reset != null) {
                pause(reset >= EPOCH_RESETS ? Duration.between(partnerNow(), Instant.ofEpochSecond(reset))
                        : Duration.ofSeconds(reset));
            }
        }

        PartnerAnswer answer(Duration ceiling) {
            Duration pause = longest.compareTo(ceiling) > 0 ? ceiling : longest;
            List<Quota> kept = new ArrayList<>(Math.min(quotas.size(), MOST_QUOTAS));
            for (Quota quota : quotas) {
                if (quota.window() != null && quota.window().compareTo(ceiling) > 0) {
                    ignore("RateLimit-Policy: a window longer than the longest pause");
                } else if (kept.size() == MOST_QUOTAS) {
                    ignore("RateLimit-Policy: more than " + MOST_QUOTAS + " quotas");
                } else {
                    kept.add(quota);
                }
            }
            return new PartnerAnswer(pause.isNegative() || pause.isZero() ? null : pause, kept, ignored);
        }

        /** Keeps {@code pause} if it is the longest yet; a pause of zero or less asks for nothing. */
        private void pause(Duration pause) {
            if (pause.compareTo(longest) > 0) {
                longest = pause;
            }
        }

        private void ignore(String note) {
            ignored.add(note);
        }

        /**
         * The partner's clock at the response: its {@code Date}, when that is one valid
         * HTTP-date; otherwise the caller's clock, with a note.
         */
        private Instant partnerNow() {
            if (!dateRead) {
                dateRead = true;
                String value = single(HttpHeaders.DATE);
                if (value != null) {
                    date = httpDate(value, now);
                    if (date == null) {
                        ignore("Date: not an HTTP-date, so our clock is used");
                    }
                }
            }
            return date == null ? now : date;
        }

        /**
         * A field that has a single value: its value without surrounding whitespace, or
         * {@code null} when absent or given in several lines that disagree (noted).
         */
        private @Nullable String single(String field) {
            List<String> lines = lines(field);
            if (lines.isEmpty()) {
                return null;
            }
            if (lines.stream().distinct().count() > 1) {
                ignore(field + ": several lines that disagree");
                return null;
            }
            return lines.get(0);
        }

        /** The lines of a field, without surrounding whitespace; none when the field is absent. */
        private List<String> lines(String field) {
            List<String> lines = headers.get(field);
            return lines == null ? List.of() : lines.stream().map(String::strip).toList();
        }

        /**
         * An {@code X-RateLimit-*} field: a non-negative integer, or {@code null} when absent,
         * or malformed or contradictory (noted).
         */
        private @Nullable Long plainNumber(String field) {
            String value = single(field);
            if (value == null) {
                return null;
            }
            Long number = digits(value);
            if (number == null) {
                ignore(field + ": not a non-negative integer");
            }
            return number;
        }

        /**
         * The members of an RFC 9651 List field that name a policy, with their parameters. The
         * lines are combined with commas first; a field that does not parse is noted and has no
         * members, and each member that is not a String or a Token is noted and left out.
         */
        private List<Member> members(String field) {
            List<String> lines = lines(field).stream().filter(line -> !line.isEmpty()).toList();
            if (lines.isEmpty()) {
                return List.of();
            }
            List<ListElement<?>> elements;
            try {
                elements = Parser.parseList(String.join(", ", lines)).get();
            } catch (IllegalArgumentException e) {
                ignore(field + ": not an RFC 9651 List");
                return List.of();
            }
            List<Member> members = new ArrayList<>();
            for (ListElement<?> element : elements) {
                if (element instanceof StringItem string) {
                    members.add(new Member(string.get(), string.getParams()));
                } else if (element instanceof TokenItem token) {
                    members.add(new Member(token.get(), token.getParams()));
                } else {
                    ignore(field + ": a member that is not a String or a Token");
                }
            }
            return members;
        }
    }

    /** A member of {@code RateLimit-Policy} or {@code RateLimit}: the policy it names, and its parameters. */
    private record Member(String name, Parameters parameters) {
    }

    /**
     * A policy of {@code RateLimit-Policy}.
     *
     * @param window its window in seconds; {@code null} when not given
     */
    private record Policy(long quota, @Nullable Long window) {
    }

    /**
     * A member of {@code RateLimit}.
     *
     * @param reset its {@code t} in seconds; {@code null} when not given
     */
    private record Limit(String name, long remaining, @Nullable Long reset) {
    }

    /**
     * Delta-seconds, or any plain non-negative integer: one to 15 ASCII digits, nothing else.
     *
     * @return the number, or {@code null} if {@code value} is not one
     */
    private static @Nullable Long digits(String value) {
        if (value.isEmpty() || value.length() > MOST_DIGITS) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return null;
            }
        }
        return Long.parseLong(value);
    }

    /** An RFC 9651 Integer parameter at least 0, or {@code null} if {@code item} is not one. */
    private static @Nullable Long nonNegative(@Nullable Item<?> item) {
        return item instanceof IntegerItem integer && integer.getAsLong() >= 0 ? integer.getAsLong() : null;
    }

    /** An RFC 9651 Integer parameter at least 1, or {@code null} if {@code item} is not one. */
    private static @Nullable Long positive(@Nullable Item<?> item) {
        Long number = nonNegative(item);
        return number == null || number == 0 ? null : number;
    }

    /** A policy's name for a note: quoted, and cut to {@value #MOST_QUOTED} characters. */
    private static String quoted(String name) {
        return '"' + (name.length() > MOST_QUOTED ? name.substring(0, MOST_QUOTED) + "..." : name) + '"';
    }
}
