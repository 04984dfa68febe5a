package dev.sluice.sample;

import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * Which plan each organization pays for: {@code pro}, or the free plan (the limiters' default
 * tiers). A real application would read it from its accounts; key and plan expressions call it
 * as {@code @organizationPlans.planOf(#orgId)}.
 */
@Component
public class OrganizationPlans {

    private static final Set<String> PRO = Set.of("acme-pro", "initech");

    /**
     * The plan of an organization.
     *
     * @param orgId the organization
     * @return {@code "pro"}, or {@code null} for the free plan
     */
    public @Nullable String planOf(String orgId) {
        return PRO.contains(orgId) ? "pro" : null;
    }
}
