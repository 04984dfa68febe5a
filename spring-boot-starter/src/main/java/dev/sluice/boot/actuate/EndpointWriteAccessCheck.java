package dev.sluice.boot.actuate;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;

/**
 * Warns once, as the application starts, when anyone who reaches it over HTTP may use the
 * {@code ratelimits} endpoint's write operations, which lift limits ({@code POST}) and unblock
 * keys ({@code DELETE}): the endpoint allows them ({@code access: unrestricted}), and neither
 * Spring Security nor a loopback address (of the management server, or of the server when the
 * actuator shares it) stands in front of them. It cannot tell what a security configuration
 * allows; that one is present is enough for it.
 */
final class EndpointWriteAccessCheck implements SmartInitializingSingleton {

    private static final System.Logger LOGGER = System.getLogger(EndpointWriteAccessCheck.class.getName());

    /** The beans through which Spring Security's servlet and reactive support filter requests. */
    private static final List<String> SECURITY_FILTERS = List.of("springSecurityFilterChain",
            "springSecurityWebFilterChainFilter");

    private final Environment environment;
    private final ListableBeanFactory beans;

    /**
     * A check of one application.
     *
     * @param environment its settings
     * @param beans       its beans, to find Spring Security's filters
     */
    EndpointWriteAccessCheck(Environment environment, ListableBeanFactory beans) {
        this.environment = environment;
        this.beans = beans;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (writable() && !secured() && !closedToOthers()) {
            LOGGER.log(System.Logger.Level.WARNING, "The ratelimits endpoint lets anyone who reaches this application"
                    + " over HTTP lift limits (POST) and unblock keys (DELETE): management.endpoint.ratelimits.access"
                    + " is unrestricted, and neither Spring Security nor a loopback management.server.address"
                    + " protects it. Protect it, or set management.endpoint.ratelimits.access=read-only.");
        }
    }

    /** Whether the endpoint's write operations are allowed, as the actuator decides it. */
    private boolean writable() {
        String access = setting("management.endpoint.ratelimits.access",
                setting("management.endpoints.access.default", "read-only"));
        return "unrestricted".equals(access)
                && "unrestricted".equals(setting("management.endpoints.access.max-permitted", "unrestricted"));
    }

    private String setting(String name, String otherwise) {
        String value = environment.getProperty(name);
        return value == null ? otherwise : value.trim().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private boolean secured() {
        return SECURITY_FILTERS.stream().anyMatch(beans::containsBean);
    }

    /** Whether only this machine reaches the endpoint over HTTP: a loopback address, or no HTTP at all. */
    private boolean closedToOthers() {
        String managementPort = environment.getProperty("management.server.port");
        if ("-1".equals(managementPort)) {
            return true;
        }
        boolean ownPort = managementPort != null
                && !Objects.equals(managementPort, environment.getProperty("server.port"));
        return loopback(environment.getProperty(ownPort ? "management.server.address" : "server.address"));
    }

    private static boolean loopback(@Nullable String address) {
        if (address == null || address.isBlank()) {
            return false;
        }
        try {
            return InetAddress.getByName(address.trim()).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
