package dev.sluice.boot.web.reactive;

import dev.sluice.boot.web.ClientIpResolver;
import org.springframework.http.server.reactive.ServerHttpRequest;

/** The client address WebFlux finds for a request, for the tests of the resolver, which compare it with Spring MVC's. */
public final class ReactiveClientIp {

    private ReactiveClientIp() {
    }

    /**
     * The client address of a WebFlux request, as {@code #ip} and the HTTP rules find it.
     *
     * @param resolver the resolver
     * @param request  the request
     * @return the address
     */
    public static String of(ClientIpResolver resolver, ServerHttpRequest request) {
        return SluiceWebFluxAutoConfiguration.clientIp(resolver, request);
    }
}
