package dev.sluice.boot.web;

import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import java.net.URI;
import java.util.List;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * The RFC 9457 answers to Sluice's exceptions, the same for Spring MVC and WebFlux: each web
 * stack's exception handler writes the rate-limit headers of the request, then returns one of
 * these. The key is never part of an answer.
 *
 * <p>Public for the exception handlers of Spring MVC and WebFlux, in their own packages.
 */
public final class RateLimitProblems {

    private RateLimitProblems() {
    }

    /**
     * {@code 429 Too Many Requests} of type {@code problemType}, whose {@code detail} is the
     * rejection's reason (the limiter's message, or {@code "Rate limit store overloaded"} when the
     * store was overloaded) and whose {@code violated-policies} names the limiter.
     *
     * @param rejection   the rejection
     * @param problemType {@code sluice.web.problem-type}
     * @return the answer, without the rate-limit headers and {@code Retry-After}
     */
    public static ResponseEntity<ProblemDetail> tooManyRequests(RateLimitExceededException rejection, URI problemType) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, rejection.reason());
        problem.setType(problemType);
        problem.setTitle("Request cannot be satisfied as assigned quota has been exceeded");
        problem.setProperty("violated-policies", List.of(rejection.limiterName()));
        return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(problem);
    }

    /**
     * {@code 503 Service Unavailable} with the rejection's {@code Retry-After}: a call this
     * request made to another service was refused by the limit of those calls, which is none of
     * the client's doing. Neither the limit nor its quota is named.
     *
     * @param rejection the outbound limiter's rejection
     * @return the answer
     */
    public static ResponseEntity<ProblemDetail> dependencyLimited(RateLimitExceededException rejection) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
                "A service this request depends on cannot be called right now; try again later.");
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER,
                        String.valueOf(Math.max(1, RateLimitPolicies.seconds(rejection.retryAfter()))))
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(problem);
    }

    /**
     * {@code 503 Service Unavailable} with a short {@code Retry-After}: the service is fine, but
     * the call cannot be checked right now.
     *
     * @param unavailable what the limiter threw
     * @return the answer
     */
    public static ResponseEntity<ProblemDetail> serviceUnavailable(StoreUnavailableException unavailable) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
                "The rate limit of this request cannot be checked right now; try again shortly.");
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER,
                        String.valueOf(Math.max(1, RateLimitPolicies.seconds(unavailable.retryAfter()))))
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(problem);
    }

    /**
     * {@code 400 Bad Request}: the request lacks what its limit is counted by.
     *
     * @return the answer
     */
    public static ResponseEntity<ProblemDetail> badRequest() {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                "This request lacks what its rate limit is counted by.");
        return ResponseEntity.badRequest().contentType(MediaType.APPLICATION_PROBLEM_JSON).body(problem);
    }
}
