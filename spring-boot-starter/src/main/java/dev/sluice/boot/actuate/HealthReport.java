package dev.sluice.boot.actuate;

import java.util.Map;

/**
 * A health status with its details, as Spring Boot's health endpoint shows them; each starter
 * turns it into its Spring Boot line's {@code Health}.
 *
 * @param status      the status code, {@code UP} or one of Sluice's own
 * @param description what the status means, empty for {@code UP}
 * @param details     the details, in the order they are shown
 */
record HealthReport(String status, String description, Map<String, Object> details) {
}
