package dev.sluice.boot.diagnostics;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.util.StringUtils;

/**
 * Reports {@link UnsupportedSpringBootException} in Spring Boot's "APPLICATION FAILED TO
 * START" block: the versions needed and found as the description, the remedy as the action.
 * Registered in {@code META-INF/spring.factories}; like the check, it uses only types that
 * Spring Boot 2.7, 3.x and 4.x all have.
 */
final class UnsupportedSpringBootFailureAnalyzer extends AbstractFailureAnalyzer<UnsupportedSpringBootException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnsupportedSpringBootException cause) {
        return new FailureAnalysis(cause.problem() + ".", StringUtils.capitalize(cause.action()) + ".", cause);
    }
}
