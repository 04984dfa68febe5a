package dev.sluice.gateway.docs;

import org.springframework.stereotype.Component;

/** The {@code plans} bean of docs/spring-cloud-gateway.md, which the routes' plan expressions call. */
// tag::plans[]
@Component("plans")
public class Plans {

    /**
     * The plan an API key is on: a plan of {@code sluice.limits.partner.plans}, or {@code null} for
     * the limiter's own tiers. Here keys of the gold plan start with {@code gold-}; look yours up in
     * your accounts (through a cache: it is asked on every request).
     */
    public String of(String apiKey) {
        return apiKey != null && apiKey.startsWith("gold-") ? "gold" : null;
    }
}
// end::plans[]
