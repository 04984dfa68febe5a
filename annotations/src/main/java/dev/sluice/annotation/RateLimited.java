package dev.sluice.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits how often the annotated method may be called.
 *
 * <p>Each {@code @RateLimited} is one <em>tier</em>: at most {@link #limit()} permits per
 * {@link #window()} for each value of the {@link #key()} expression. Repeat the annotation
 * to add tiers; a call must pass all of them:
 *
 * <pre class="code">
 * &#64;RateLimited(key = "#ip", limit = 3, window = "1m", blockFor = "15m")
 * &#64;RateLimited(key = "#req.phone", limit = 10, window = "1h")
 * public OtpResponse sendOtp(OtpRequest req) { ... }
 * </pre>
 *
 * <p>Tiers that share a limiter name and key form one limiter and are decided atomically: a
 * call rejected by any of them is counted by none (unless a tier sets
 * {@link #countRejected()}). Tiers with different keys are separate limiters, checked in
 * declaration order; a call rejected by a later one has already been counted by the earlier
 * ones.
 *
 * <p>On a type, the annotation applies to every public method the type declares that has no
 * {@code @RateLimited} of its own (each method gets its own limiter). It also works as a
 * meta-annotation, one level deep, so a team can name its policies:
 *
 * <pre class="code">
 * &#64;Retention(RUNTIME) &#64;Target(METHOD)
 * &#64;RateLimited(key = "#ip", limit = 3, window = "1m")
 * &#64;RateLimited(key = "#ip", limit = 20, window = "1d")
 * public &#64;interface OtpLimit {}
 * </pre>
 *
 * <p>Annotations are read and validated once per method. Under Spring every annotated bean is
 * validated when the context starts, so a bad annotation fails start-up with a message naming
 * the method and the attribute, not the first call.
 *
 * <p><strong>How calls are intercepted.</strong> With Spring AOP ({@code @EnableRateLimiting}
 * or the Spring Boot starter) a call is limited only when it goes through the Spring proxy:
 * a method calling another annotated method <em>of the same object</em> ({@code this.send()})
 * bypasses the proxy and is not limited, and neither are objects Spring does not manage.
 * Weaving the aspect {@code dev.sluice.aop.RateLimitedAspect} with AspectJ (at compile time
 * with the AspectJ Maven plugin, or at load time) covers both cases, because the limit is then
 * part of the method itself. Either way, annotations on interface methods are not inherited by
 * their implementations (Spring fails start-up when it finds one): annotate the implementing
 * class or method.
 *
 * @see Algorithm
 * @see OnLimit
 * @see FailurePolicy
 * @see RateLimits
 */
@Documented
@Repeatable(RateLimits.class)
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE})
public @interface RateLimited {

    /**
     * The limiter's name: part of every stored key (so two limiters never share a counter),
     * the name configuration overrides refer to, the metric tag, and the policy name in HTTP
     * rate-limit headers. {@code ${...}} placeholders are resolved.
     *
     * <p>Default: {@code "SimpleClassName.method"}, for example {@code "OtpController.sendOtp"};
     * an overloaded method adds its parameter types: {@code "Orders.find(String,int)"}. When the
     * tiers of one method use different keys and no name, each key gets its own limiter, numbered
     * in the order the keys come: {@code "OtpController.sendOtp-1"} for the first key,
     * {@code "OtpController.sendOtp-2"} for the second. A default name never shows the key
     * expression, and a URL path and a header carry it as it is. Tiers that give
     * the same name must give the same key; methods that give the same name share counters.
     * Only the class's own methods count as overloads (with its superclasses'), never the
     * methods of interfaces it implements, so implementing an interface never changes a name.
     *
     * <p>The name is the policy name of the {@code RateLimit-Policy} and {@code RateLimit}
     * headers, an RFC 9651 string, so it must be printable ASCII ({@code U+0020} to
     * {@code U+007E}) once placeholders are resolved; a name with a line break, another control
     * character or a letter beyond ASCII fails start-up. That includes a default name made of a
     * class or method name beyond ASCII: give such a limiter a name.
     *
     * <p>Example: {@code name = "otp"}.
     */
    String name() default "";

    /**
     * A SpEL expression giving the key the limit is counted for: each distinct value has its
     * own counters. Method arguments are available by name ({@code #phone}; compile with
     * {@code -parameters}) and by position ({@code #p0}, {@code #a0}), as are
     * {@code #root.method}, {@code #root.target}, {@code #root.args} and bean references
     * ({@code @tenantResolver.current()}). In a web request the Spring Boot starter adds
     * {@code #ip}, the client address (honouring only trusted proxies), and {@code #request}.
     * The value is turned into a string; an expression that yields {@code null} or a blank
     * string is an error, never a key shared by every caller.
     *
     * <p>Default: {@code ""}, one key for every call of the limiter (a global limit, as for an
     * outbound API that caps the whole application).
     *
     * <p>Example: {@code key = "#req.phone"}.
     */
    String key() default "";

    /**
     * How many permits each key gets per {@link #window()}; for {@link Algorithm#TOKEN_BUCKET},
     * the bucket's capacity. Must be positive.
     *
     * <p>Default: {@code -1}, meaning the limit comes from {@link #limitString()} or from
     * configuration by limiter name (with the Spring Boot starter,
     * {@code sluice.limits.<name>.tiers}); start-up fails when none supplies it.
     *
     * <p>Example: {@code limit = 100}.
     */
    long limit() default -1;

    /**
     * The {@link #limit()} as text, so that it can come from a {@code ${...}} placeholder, as
     * Spring's {@code @Scheduled(fixedDelayString)} does: a whole number once placeholders are
     * resolved. Give {@code limit} or {@code limitString}, not both.
     *
     * <p>Default: {@code ""}, the limit is {@link #limit()}.
     *
     * <p>Example: {@code limitString = "${limits.otp.per-minute:3}"}.
     */
    String limitString() default "";

    /**
     * The length of the window the limit applies to; for {@link Algorithm#TOKEN_BUCKET}, the
     * time in which an empty bucket refills completely. A whole number with a unit
     * ({@code "500ms"}, {@code "2s"}, {@code "1m"}, {@code "1h"}, {@code "1d"}) or ISO-8601
     * ({@code "PT10S"}); {@code ${...}} placeholders are resolved. At least one millisecond,
     * in whole milliseconds.
     *
     * <p>Default: {@code ""}, meaning the window comes from configuration, as for
     * {@link #limit()}.
     *
     * <p>Example: {@code window = "${limits.otp.window:1m}"}.
     */
    String window() default "";

    /**
     * How calls are counted. See {@link Algorithm} for each algorithm's guarantees.
     *
     * <p>Default: {@link Algorithm#SLIDING_WINDOW}.
     *
     * <p>Example: {@code algorithm = Algorithm.TOKEN_BUCKET}.
     */
    Algorithm algorithm() default Algorithm.SLIDING_WINDOW;

    /**
     * How many permits one call takes: a SpEL expression (a plain number is one) evaluated
     * for every call, with the same variables as {@link #key()}. It must yield a whole number
     * of at least 1, and no more than the smallest limit among the tiers.
     *
     * <p>Default: {@code "1"}.
     *
     * <p>Example: {@code cost = "#batch.size()"}.
     */
    String cost() default "1";

    /**
     * What happens when the call does not fit: {@link OnLimit#REJECT} throws at once,
     * {@link OnLimit#WAIT} waits for a permit for up to {@link #maxWait()}.
     *
     * <p>Default: {@link OnLimit#REJECT}.
     *
     * <p>Example: {@code onLimit = OnLimit.WAIT, maxWait = "10s"}.
     */
    OnLimit onLimit() default OnLimit.REJECT;

    /**
     * With {@link OnLimit#WAIT}: the longest a caller waits for a permit before it is
     * rejected. A call that could not fit within this time is rejected at once, without
     * waiting. Same format as {@link #window()}. Only allowed with {@link OnLimit#WAIT}. At
     * most 2<sup>52</sup> ms (about 142,000 years), the bound windows and blocks have too:
     * longer fails start-up.
     *
     * <p>Default: {@code "0s"}.
     *
     * <p>Example: {@code maxWait = "10s"}.
     */
    String maxWait() default "0s";

    /**
     * The reason given when a call is rejected, carried by the exception and, with the Spring
     * Boot starter, used as the {@code detail} of the HTTP 429 problem body. Never include
     * the key's value: it may be personal data. {@code ${...}} placeholders are resolved.
     *
     * <p>Default: {@code ""}, a generic "Rate limit exceeded".
     *
     * <p>Example: {@code message = "Too many codes requested; try again later"}.
     */
    String message() default "";

    /**
     * After a call is rejected by this tier, reject every call with the same key for this
     * long, whatever the tiers would say. Calls rejected during the block do not extend it.
     * Same format as {@link #window()}.
     *
     * <p>Default: {@code ""}, no block.
     *
     * <p>Example: {@code blockFor = "15m"} (an OTP endpoint under attack).
     */
    String blockFor() default "";

    /**
     * Whether calls rejected by any tier of the limiter still count against this tier, so
     * that a caller who keeps calling while limited stays limited instead of getting through
     * as soon as the window allows. Without it, rejected calls count against no tier.
     *
     * <p>Default: {@code false}.
     *
     * <p>Example: {@code countRejected = true}.
     */
    boolean countRejected() default false;

    /**
     * At most this many calls of a key running at once: a call is admitted only while fewer
     * than this many of the key's calls run, and gives its permit back when it ends, whatever its
     * outcome. A {@code CompletionStage} holds it until it completes, a {@code Mono} or
     * {@code Flux} until it terminates or is cancelled, a Kotlin {@code suspend} function until
     * it returns. With {@link #limit()} and {@link #window()} on the same annotation both hold,
     * decided together in one store call ("100 a minute, and at most 5 at once"); without them
     * the annotation limits only how many run at once. With {@link OnLimit#WAIT}, callers wait in
     * arrival order for a permit, up to {@link #maxWait()}.
     *
     * <p>Default: {@code -1}, no limit on calls running at once.
     *
     * <p>Example: {@code concurrency = 2} (exports per tenant).
     */
    long concurrency() default -1;

    /**
     * With {@link #concurrency()}: how long a store shared by several processes (Redis) keeps a
     * permit whose holder stopped renewing it, because its process died or stopped answering.
     * Holders renew their leases while their calls run, so a lease never cuts a slow call short;
     * it bounds how long a crashed holder's permits stay taken. At least a second; same format as
     * {@link #window()}.
     *
     * <p>Default: {@code ""}, 30 seconds.
     *
     * <p>Example: {@code lease = "10s"}.
     */
    String lease() default "";

    /**
     * What the call does when the store cannot decide it (unreachable, too slow, or its circuit
     * breaker open): admit it, fail it with {@code StoreUnavailableException}, or decide it in
     * this JVM. Give at most one policy; the tiers of one limiter agree on it.
     *
     * <p>Default: {@code {}}, the application's default (Spring Boot:
     * {@code sluice.failure-policy}), which is {@link FailurePolicy#LOCAL_FALLBACK} unless
     * configured otherwise.
     *
     * <p>Example: {@code onStoreFailure = FailurePolicy.FAIL_CLOSED} (one-time codes: better
     * refuse for a while than send without limit).
     */
    FailurePolicy[] onStoreFailure() default {};

    /**
     * What the call does when its {@link #key()} or {@link #cost()} expression cannot give a
     * value (it throws, or yields {@code null}, a blank key or a cost below 1): fail it with
     * {@code RateLimitKeyException}, count it under one key shared by all such calls, or let it
     * through without this limiter. Give at most one policy; the tiers of one limiter agree on it.
     *
     * <p>Default: {@code {}}, the application's default (Spring Boot: {@code sluice.key-error}),
     * which is {@link KeyErrorPolicy#REJECT} unless configured otherwise.
     *
     * <p>Example: {@code onKeyError = KeyErrorPolicy.SHARED_KEY} (a key from an optional header:
     * callers without it share one limit).
     */
    KeyErrorPolicy[] onKeyError() default {};

    /**
     * SpEL expression naming the plan of a call, decided per call: the limiter's plans
     * (configured by name, Spring Boot: {@code sluice.limits.<name>.plans.<plan>.tiers}, or set
     * in code) each replace its default tiers for the calls of that plan. Evaluated like
     * {@link #key()}; a {@code null} value, or a plan the limiter does not have, leaves the
     * call to the default tiers (the latter is logged and counted as an unknown plan). Counts
     * belong to the key, not to the plan: a key that changes plan keeps what it used in each
     * window the plans share. The tiers of one limiter agree on it.
     *
     * <p>Default: {@code ""}, every call takes the default tiers.
     *
     * <p>Example: {@code plan = "@tenants.planOf(#orgId)"}.
     */
    String plan() default "";

    /**
     * A SpEL expression deciding, before each call, whether the limiter applies to it, as
     * Spring's {@code @Cacheable(condition)} decides whether to cache: a call for which it is
     * {@code false} is neither limited nor counted by this limiter (internal clients, admins,
     * health probes). Evaluated like {@link #key()}, with the same variables, before the key; it
     * must give a {@code Boolean}. An expression that fails, or gives something else, is a key
     * error ({@link #onKeyError()}). The tiers of one limiter agree on it. Configuration can
     * replace it (Spring Boot: {@code sluice.limits.<name>.condition}).
     *
     * <p>Default: {@code ""}, every call is limited.
     *
     * <p>Example: {@code condition = "!#request.isUserInRole('ADMIN')"}.
     */
    String condition() default "";

    /**
     * A SpEL expression deciding, after each call, whether the permit the call took is given
     * back, as Spring's {@code @Cacheable(unless)} decides not to cache a result: when it is
     * {@code true}, the call counts as if it had not been made. It sees the variables of
     * {@link #key()} and {@code #result}, what the method returned (for a
     * {@code CompletionStage}, a {@code Mono} or a Kotlin {@code suspend} function, the value it
     * completed with; {@code null} when it completed empty or failed), and {@code #exception},
     * what the call threw (or failed with), else {@code null}. A method publishing many values
     * (a {@code Flux}) has no single result: its {@code unless} may read {@code #exception}
     * only. An expression that fails, or gives something other than a {@code Boolean}, keeps
     * the permit (and is logged). The tiers of one limiter agree on it.
     *
     * <p>The permit is held while the call runs, so that concurrent calls of one key never
     * take more permits than the limit between them; see {@link #countOn()} for counting only
     * failures. Needs a store that can give permits back (in memory and the Redis script store
     * can; the Bucket4j store cannot, and start-up fails naming the method).
     *
     * <p>Default: {@code ""}, every admitted call counts.
     *
     * <p>Example: {@code unless = "#result == null"} (a lookup that found nothing costs nothing).
     */
    String unless() default "";

    /**
     * Counts a call only when it throws one of these exceptions (or a subclass): every other
     * call gives back the permit it took once it has run, as if it had not been made. The
     * brute-force defence for verification endpoints: five <em>wrong</em> codes per 15 minutes
     * per phone, however many right ones. Each call still takes its permit before it runs, so
     * a key at its limit (or blocked by {@link #blockFor()}) is rejected without running, and
     * concurrent calls of one key never get past the limit while their outcomes are pending: at
     * most {@link #limit()} calls of a window are counted failures, whatever the concurrency.
     * The price is that a call finding the key's permits all held by running calls is rejected,
     * even if those calls then succeed. With {@link #unless()}, a call counts when it threw one
     * of these and {@code unless} is not {@code true}. A reactive call cancelled before its
     * outcome keeps its permit. Same store needs as {@link #unless()}; the tiers of one limiter
     * agree on it.
     *
     * <p>Default: {@code {}}, calls count whatever their outcome.
     *
     * <p>Example: {@code countOn = WrongCodeException.class}.
     */
    Class<? extends Throwable>[] countOn() default {};

    /**
     * The name of a method to call instead of throwing when this limiter rejects a call: its
     * value is the call's value (with the Spring Boot starter, an HTTP handler's fallback
     * answers normally, not with 429). The method belongs to the same class (any visibility,
     * static exactly when this method is), takes this method's parameters, optionally followed
     * by a {@code RateLimitExceededException} (or a supertype of it) saying why, and returns
     * what this method may return: the same reactive type for a reactive method, a
     * {@code CompletionStage} for an asynchronous one, and a {@code suspend} function for a
     * {@code suspend} function. It is found and checked at start-up, which fails naming both
     * methods. Only rejections call it: a store that cannot decide
     * ({@code StoreUnavailableException}) and the method's own exceptions reach the caller. The
     * tiers of one limiter agree on it.
     *
     * <p>Prefer a fallback when a degraded answer is still a right one (a cached quote, an empty
     * page of recommendations); prefer the exception (an HTTP 429 with {@code Retry-After})
     * when the caller must know it was limited and when to come back.
     *
     * <p>Default: {@code ""}, a rejected call throws {@code RateLimitExceededException}.
     *
     * <p>Example: {@code fallbackMethod = "cachedQuote"}.
     */
    String fallbackMethod() default "";
}
