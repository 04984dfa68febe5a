package dev.sluice.boot.threadsapp;

import dev.sluice.annotation.RateLimited;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/**
 * A WebFlux application saying which threads serve its requests: each handler answers with the
 * name of the thread it runs on, and every response, admitted or refused, carries in
 * {@code X-Committed-On} the name of the thread that wrote it.
 */
@SpringBootApplication
public class ThreadsApp {

    /** Names the thread that commits each response. */
    @Bean
    WebFilter committingThread() {
        return new OrderedFilter();
    }

    /** Runs first, so that it sees every response, those the rate-limit filter refuses included. */
    static final class OrderedFilter implements WebFilter, Ordered {

        @Override
        public Mono<Void> filter(org.springframework.web.server.ServerWebExchange exchange,
                                 org.springframework.web.server.WebFilterChain chain) {
            exchange.getResponse().beforeCommit(() -> {
                exchange.getResponse().getHeaders().set("X-Committed-On", Thread.currentThread().getName());
                return Mono.empty();
            });
            return chain.filter(exchange);
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
    }

    @RestController
    static class Endpoints {

        /** Limited by its annotation. */
        @GetMapping("/annotated")
        @RateLimited(name = "annotated", limit = 1, window = "1h")
        public Mono<String> annotated() {
            return Mono.just(Thread.currentThread().getName());
        }

        /** Limited by the HTTP rule {@code ruled}. */
        @GetMapping("/ruled")
        public Mono<String> ruled() {
            return Mono.just(Thread.currentThread().getName());
        }
    }
}
