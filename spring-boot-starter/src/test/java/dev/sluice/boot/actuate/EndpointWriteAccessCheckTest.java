package dev.sluice.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.boot.LoggedMessages;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.mock.env.MockEnvironment;

/**
 * The start-up warning about the {@code ratelimits} endpoint's write operations open over HTTP.
 */
class EndpointWriteAccessCheckTest {

    private static final String WARNING = "The ratelimits endpoint lets anyone who reaches this application over"
            + " HTTP lift limits (POST) and unblock keys (DELETE)";

    private final DefaultListableBeanFactory beans = new DefaultListableBeanFactory();

    private String warnings(MockEnvironment environment) {
        try (LoggedMessages log = new LoggedMessages(EndpointWriteAccessCheck.class)) {
            new EndpointWriteAccessCheck(environment, beans).afterSingletonsInstantiated();
            return log.messages();
        }
    }

    private static MockEnvironment unrestricted() {
        return new MockEnvironment().withProperty("management.endpoint.ratelimits.access", "unrestricted");
    }

    @Test
    void warnsOnceWhenAnyoneCanWriteLimits() {
        assertThat(warnings(unrestricted())).containsOnlyOnce(WARNING)
                .contains("set management.endpoint.ratelimits.access=read-only");
        assertThat(warnings(new MockEnvironment().withProperty("management.endpoints.access.default", "UNRESTRICTED")))
                .as("unrestricted for every endpoint").contains(WARNING);
    }

    @Test
    void saysNothingWhileTheEndpointIsReadOnlyAsByDefault() {
        assertThat(warnings(new MockEnvironment())).doesNotContain(WARNING);
        assertThat(warnings(unrestricted().withProperty("management.endpoints.access.max-permitted", "read-only")))
                .as("capped for every endpoint").doesNotContain(WARNING);
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "::1", "localhost"})
    void saysNothingWhenTheServerTheActuatorSharesListensOnLoopbackOnly(String address) {
        assertThat(warnings(unrestricted().withProperty("server.address", address))).doesNotContain(WARNING);
    }

    @Test
    void aLoopbackManagementServerProtectsIt() {
        MockEnvironment environment = unrestricted().withProperty("server.port", "8080")
                .withProperty("management.server.port", "8081")
                .withProperty("management.server.address", "127.0.0.1");

        assertThat(warnings(environment)).doesNotContain(WARNING);
        assertThat(warnings(environment.withProperty("management.server.address", "0.0.0.0"))).contains(WARNING);
        assertThat(warnings(unrestricted().withProperty("server.address", "127.0.0.1")
                .withProperty("management.server.port", "8081"))).as("a management server on every address")
                .contains(WARNING);
        assertThat(warnings(unrestricted().withProperty("management.server.port", "-1")))
                .as("no management over HTTP").doesNotContain(WARNING);
    }

    @ParameterizedTest
    @ValueSource(strings = {"springSecurityFilterChain", "springSecurityWebFilterChainFilter"})
    void springSecurityOnServletOrReactiveProtectsIt(String filter) {
        beans.registerSingleton(filter, new Object());

        assertThat(warnings(unrestricted())).doesNotContain(WARNING);
    }
}
