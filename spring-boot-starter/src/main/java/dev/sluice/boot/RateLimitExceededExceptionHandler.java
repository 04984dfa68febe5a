package dev.sluice.boot;

import dev.sluice.RateLimitExceededException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.util.List;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Turns {@link RateLimitExceededException} into {@code 429 Too Many Requests}: an RFC 9457
 * {@code application/problem+json} body of type {@code quota-exceeded} whose {@code detail} is the
 * limiter's message and whose {@code violated-policies} names the limiter, {@code Retry-After}
 * in whole seconds rounded up, and the rate-limit headers. The key is never sent. Registered by
 * the starter with order {@code Ordered.HIGHEST_PRECEDENCE + 1000}, ahead of the application's
 * usual advice; an application that wants its own 429 handles the exception in an advice ordered
 * before it.
 */
@RestControllerAdvice
public class RateLimitExceededExceptionHandler {

    /** The problem type registered for exceeded quotas. */
    public static final URI QUOTA_EXCEEDED = URI.create("https://iana.org/assignments/http-problem-types#quota-exceeded");

    private final RateLimitResponseHeaders headers;

    RateLimitExceededExceptionHandler(RateLimitResponseHeaders headers) {
        this.headers = headers;
    }

    /**
     * Answers a rejected call.
     *
     * @param rejection the rejection
     * @param request   the request
     * @param response  the response, for the headers
     * @return the 429 problem
     */
    @ExceptionHandler(RateLimitExceededException.class)
    public ResponseEntity<ProblemDetail> tooManyRequests(RateLimitExceededException rejection,
                                                         HttpServletRequest request, HttpServletResponse response) {
        headers.writeRejection(request, response, rejection.limiterName(), rejection.decision());
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, rejection.reason());
        problem.setType(QUOTA_EXCEEDED);
        problem.setTitle("Request cannot be satisfied as assigned quota has been exceeded");
        problem.setProperty("violated-policies", List.of(rejection.limiterName()));
        return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(problem);
    }
}
