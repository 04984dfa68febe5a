package dev.sluice.gateway;

import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.gateway.server.mvc.common.Configurable;
import org.springframework.cloud.gateway.server.mvc.filter.SimpleFilterSupplier;
import org.springframework.context.ApplicationContext;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Sluice limits on Spring Cloud Gateway Server MVC routes, as filter functions:
 *
 * <pre class="code">
 * route("api")
 *     .GET("/api/**", http())
 *     .before(uri("http://backend"))
 *     .filter(SluiceFilterFunctions.rateLimit("api", request -&gt; request.headers().firstHeader("X-Api-Key")))
 *     .build();
 * </pre>
 *
 * <p>A route names a limiter of {@code sluice.limits} (its tiers and plans) or has tiers of its own
 * under a name; its key comes from a function of the request or a SpEL expression over
 * {@code #ip}, {@code #request} and {@code #path}, its plan from a SpEL expression. Routes defined
 * in {@code spring.cloud.gateway.server.webmvc.routes} use the same options as the filter
 * {@code RateLimit}:
 *
 * <pre class="code">
 * filters:
 *   - name: RateLimit
 *     args:
 *       limiter: api
 *       key: "#ip"
 * </pre>
 *
 * <p>The filter's limiter is checked and registered when the application starts (for routes made
 * later, on their first request) and answers as Sluice's own limits do: admitted requests carry the
 * rate-limit headers, a rejection is Sluice's {@code 429} problem with {@code Retry-After}, a request
 * that cannot be checked under {@code FAIL_CLOSED} {@code 503}, and one whose key cannot be worked
 * out under {@code sluice.key-error=reject} {@code 400}.
 */
public final class SluiceFilterFunctions {

    /** Filters made but not bound to an application yet, each with the thread that made it. */
    private static final Set<ServerMvcRouteLimit> UNBOUND = Collections.synchronizedSet(
            Collections.newSetFromMap(new WeakHashMap<>()));

    private SluiceFilterFunctions() {
    }

    /**
     * Limits a route by a limiter of {@code sluice.limits}, under the key a function gives.
     *
     * @param limiterName the limiter's name in {@code sluice.limits}
     * @param keyFunction the key of a request; {@code null} or blank is a key that cannot be worked
     *                    out ({@code sluice.key-error})
     * @return the filter
     */
    public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(
            String limiterName, Function<ServerRequest, @Nullable String> keyFunction) {
        // Parameter names no property route's arguments have: those bind to rateLimit(RateLimitConfig).
        return rateLimit(config -> config.limiter(limiterName).key(keyFunction));
    }

    /**
     * Limits a route as a configuration says.
     *
     * @param configurer sets the options
     * @return the filter
     */
    public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(Consumer<RateLimitConfig> configurer) {
        RateLimitConfig config = new RateLimitConfig();
        configurer.accept(config);
        return rateLimit(config);
    }

    /**
     * Limits a route as a configuration says; the form that routes of
     * {@code spring.cloud.gateway.server.webmvc.routes} bind their {@code RateLimit} arguments to.
     *
     * @param config the options
     * @return the filter
     */
    @Configurable
    public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(RateLimitConfig config) {
        ServerMvcRouteLimit filter = new ServerMvcRouteLimit(config, Thread.currentThread());
        UNBOUND.add(filter);
        return filter;
    }

    /**
     * Binds the filters a thread made (while it built an application's routes) to that
     * application, checking their options.
     */
    static void bindMadeBy(Thread thread, ApplicationContext context) {
        List<ServerMvcRouteLimit> made;
        synchronized (UNBOUND) {
            made = UNBOUND.stream().filter(filter -> filter.madeBy() == thread).toList();
            made.forEach(UNBOUND::remove);
        }
        made.forEach(filter -> filter.bind(context));
    }

    /**
     * The options of a route's limit: those of {@link RouteLimitOptions}, a name for the limiter of
     * tiers of the route's own, and optionally a function giving the key.
     */
    public static class RateLimitConfig extends RouteLimitOptions<RateLimitConfig> {

        private @Nullable String name;
        private @Nullable Function<ServerRequest, @Nullable String> keyFunction;

        /**
         * The name of the limiter of the route's own tiers, in headers, metrics and
         * {@code sluice.limits.<name>.plans}.
         *
         * @return the name, or {@code null} for a route that names a limiter of {@code sluice.limits}
         */
        public @Nullable String getName() {
            return name;
        }

        /**
         * Sets the name of the limiter of the route's own tiers.
         *
         * @param name the name
         */
        public void setName(@Nullable String name) {
            this.name = name;
        }

        /**
         * The function giving a request's key, if the route has one rather than a key expression.
         *
         * @return the function, or {@code null}
         */
        public @Nullable Function<ServerRequest, @Nullable String> getKeyFunction() {
            return keyFunction;
        }

        /**
         * Names the limiter of the route's own tiers.
         *
         * @param name the limiter's name
         * @return this configuration
         */
        public RateLimitConfig name(String name) {
            setName(name);
            return this;
        }

        /**
         * Counts requests under the key a function gives.
         *
         * @param key the key of a request; {@code null} or blank is a key that cannot be worked out
         * @return this configuration
         */
        public RateLimitConfig key(Function<ServerRequest, @Nullable String> key) {
            this.keyFunction = Objects.requireNonNull(key, "key");
            return this;
        }
    }

    /**
     * Makes {@code RateLimit} a filter of the routes of {@code spring.cloud.gateway.server.webmvc.routes};
     * registered as a bean by Sluice's gateway auto-configuration.
     */
    public static class FilterSupplier extends SimpleFilterSupplier {

        /** Supplies the filter functions of {@link SluiceFilterFunctions}. */
        public FilterSupplier() {
            super(SluiceFilterFunctions.class);
        }
    }
}
