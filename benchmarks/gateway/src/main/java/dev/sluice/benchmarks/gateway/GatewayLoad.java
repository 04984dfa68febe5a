package dev.sluice.benchmarks.gateway;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.redisson.testing.RedisServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Mono;

/**
 * One hot route (every request under one key) through a Spring Cloud Gateway WebFlux application,
 * three ways in one run and one JVM, against one {@code redis-server} this starts: the route with
 * no limiter (the gateway's own cost), limited by Sluice ({@code sluiceRateLimiter}, the Redis Lua
 * store, {@code sluice.store=redis}), and limited by the gateway's {@code RedisRateLimiter}. Limits
 * are far above the load, so every request is admitted and decided in Redis. For each route: warm
 * up, then keep a number of requests in flight for the measured seconds; requests a second and
 * p50/p99 latency, one line per route.
 *
 * <p>{@code GatewayLoad [--in-flight 64] [--warm-up 5] [--measure 20]}
 */
public final class GatewayLoad {

    private GatewayLoad() {
    }

    /** The gateway: the gateway's RedisRateLimiter is primary, so that it is the filter's default. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Gateway {

        @Bean
        KeyResolver hotKey() {
            return exchange -> Mono.just("hot");
        }

        @Bean
        @Primary
        RedisRateLimiter redisRateLimiter(ReactiveStringRedisTemplate redis,
                                          @Qualifier(RedisRateLimiter.REDIS_SCRIPT_NAME) RedisScript<List<Long>> script,
                                          ConfigurationService configurationService) {
            return new RedisRateLimiter(redis, script, configurationService);
        }
    }

    public static void main(String[] arguments) throws Exception {
        int inFlight = option(arguments, "--in-flight", 64);
        int warmUp = option(arguments, "--warm-up", 5);
        int measure = option(arguments, "--measure", 20);
        try (RedisServer redis = RedisServer.start()) {
            HttpServer backend = backend();
            String route = "spring.cloud.gateway.server.webflux.routes[%d].";
            List<String> properties = new ArrayList<>(List.of("server.port=0", "logging.level.root=warn",
                    "spring.data.redis.port=" + redis.port(), "spring.data.redis.host=127.0.0.1",
                    "sluice.store=redis", "sluice.redis.address=" + redis.address()));
            String backendUri = "http://127.0.0.1:" + backend.getAddress().getPort();
            String[] names = {"plain", "sluice", "redis"};
            for (int i = 0; i < names.length; i++) {
                String prefix = String.format(Locale.ROOT, route, i);
                properties.add(prefix + "id=" + names[i]);
                properties.add(prefix + "uri=" + backendUri);
                properties.add(prefix + "predicates[0]=Path=/" + names[i] + "/**");
            }
            String sluice = String.format(Locale.ROOT, route, 1) + "filters[0].";
            properties.addAll(List.of(sluice + "name=RequestRateLimiter",
                    sluice + "args.rate-limiter=#{@sluiceRateLimiter}", sluice + "args.key-resolver=#{@hotKey}",
                    sluice + "args.sluice-rate-limiter.tiers[0].limit=1000000000",
                    sluice + "args.sluice-rate-limiter.tiers[0].window=1m"));
            String gateway = String.format(Locale.ROOT, route, 2) + "filters[0].";
            properties.addAll(List.of(gateway + "name=RequestRateLimiter",
                    gateway + "args.rate-limiter=#{@redisRateLimiter}", gateway + "args.key-resolver=#{@hotKey}",
                    gateway + "args.redis-rate-limiter.replenish-rate=100000000",
                    gateway + "args.redis-rate-limiter.burst-capacity=100000000"));
            try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Gateway.class)
                    .web(WebApplicationType.REACTIVE).properties(properties.toArray(String[]::new)).run()) {
                int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
                System.out.printf(Locale.ROOT, "# %d requests in flight, %d s warm-up, %d s measured per route;"
                        + " %d cores%n", inFlight, warmUp, measure, Runtime.getRuntime().availableProcessors());
                System.out.printf(Locale.ROOT, "%-8s %12s %10s %10s %8s%n", "route", "requests/s", "p50 ms",
                        "p99 ms", "non-200");
                for (String name : names) {
                    URI uri = URI.create("http://127.0.0.1:" + port + "/" + name + "/item");
                    load(uri, inFlight, Duration.ofSeconds(warmUp));
                    Result result = load(uri, inFlight, Duration.ofSeconds(measure));
                    System.out.printf(Locale.ROOT, "%-8s %12.0f %10.2f %10.2f %8d%n", name, result.perSecond(),
                            result.percentile(0.50), result.percentile(0.99), result.failed());
                }
            } finally {
                backend.stop(0);
                ((ExecutorService) backend.getExecutor()).shutdownNow();
            }
        }
    }

    private record Result(double perSecond, long[] nanos, long failed) {

        double percentile(double p) {
            return nanos.length == 0 ? Double.NaN : nanos[(int) Math.min(nanos.length - 1, p * nanos.length)] / 1e6;
        }
    }

    /** Keeps {@code inFlight} requests going for {@code duration}. */
    private static Result load(URI uri, int inFlight, Duration duration) throws InterruptedException {
        ExecutorService executor = Executors.newFixedThreadPool(2);
        // HTTP/1.1, as the gateway's clients mostly speak: the default, HTTP/2, would offer an h2c upgrade each time.
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor).build();
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build();
        Semaphore slots = new Semaphore(inFlight);
        long[] latencies = new long[1 << 24];
        AtomicLong count = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        while (System.nanoTime() < end) {
            slots.acquire();
            long sent = System.nanoTime();
            CompletableFuture<HttpResponse<Void>> response = client.sendAsync(request,
                    HttpResponse.BodyHandlers.discarding());
            response.whenComplete((answer, failure) -> {
                long index = count.getAndIncrement();
                if (index < latencies.length) {
                    latencies[(int) index] = System.nanoTime() - sent;
                }
                if (failure != null || answer.statusCode() != 200) {
                    failed.incrementAndGet();
                }
                slots.release();
            });
        }
        slots.acquire(inFlight);
        double seconds = (System.nanoTime() - start) / 1e9;
        long[] measured = Arrays.copyOf(latencies, (int) Math.min(count.get(), latencies.length));
        Arrays.sort(measured);
        executor.shutdownNow();
        return new Result(count.get() / seconds, measured, failed.get());
    }

    private static HttpServer backend() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
        byte[] body = "ok".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        server.createContext("/", exchange -> {
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
        return server;
    }

    private static int option(String[] arguments, String name, int otherwise) {
        for (int i = 0; i < arguments.length - 1; i++) {
            if (arguments[i].equals(name)) {
                return Integer.parseInt(arguments[i + 1]);
            }
        }
        return otherwise;
    }
}
