package dev.sluice.boot;

import dev.sluice.boot.reactiveapp.ReactiveLimitedApp;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Unblocking callers and changing limits over HTTP in the WebFlux test application, whose
 * actuator endpoint WebFlux serves: the same operations and answers as in Spring MVC.
 */
@SpringBootTest(classes = ReactiveLimitedApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.config.name=reactive", "sluice.web.trusted-proxies=127.0.0.1",
            "management.endpoint.ratelimits.access=unrestricted",
            "sluice.top-keys.mask-secret=" + HttpOperationsContract.MASK_SECRET})
class ReactiveHttpOperationsTest extends HttpOperationsContract {
}
