package dev.sluice.test.docs;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.PropertySource;

/**
 * The application of the testing guide's example: it counts in Redis, at an address where no
 * Redis runs, so that the example passes only if its tests never use the configured store.
 */
@SpringBootApplication
@PropertySource("classpath:dev/sluice/test/docs/redis.properties")
public class OtpApplication {
}
