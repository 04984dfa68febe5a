package dev.sluice.boot.web.servlet;

import dev.sluice.boot.web.ClientIpResolver;
import jakarta.servlet.http.HttpServletRequest;

/** The client address Spring MVC finds for a request, for the tests of the resolver, which compare it with WebFlux's. */
public final class ServletClientIp {

    private ServletClientIp() {
    }

    /**
     * The client address of a servlet request, as {@code #ip} and the HTTP rules find it.
     *
     * @param resolver the resolver
     * @param request  the request
     * @return the address
     */
    public static String of(ClientIpResolver resolver, HttpServletRequest request) {
        return SluiceWebMvcAutoConfiguration.clientIp(resolver, request);
    }
}
