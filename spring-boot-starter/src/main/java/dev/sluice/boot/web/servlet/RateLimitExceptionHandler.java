package dev.sluice.boot.web.servlet;

import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.autoconfigure.SluiceProperties;
import dev.sluice.boot.web.OutboundLimiters;
import dev.sluice.boot.web.RateLimitProblems;
import dev.sluice.boot.web.reactive.ReactiveRateLimitExceptionHandler;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.util.function.Supplier;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers Sluice's exceptions with RFC 9457 {@code application/problem+json} bodies:
 *
 * <ul>
 * <li>{@link RateLimitExceededException} becomes {@code 429 Too Many Requests}, of type
 * {@code sluice.web.problem-type} ({@link SluiceProperties.Web#QUOTA_EXCEEDED} unless set), whose {@code detail}
 * is the limiter's message and whose {@code violated-policies} names the limiter, with
 * {@code Retry-After} in whole seconds rounded up and the rate-limit headers. A call rejected
 * because the store was overloaded ({@link RateLimitExceededException#overloaded()}) is answered
 * the same way, never with 503: its {@code detail} says {@code "Rate limit store overloaded"},
 * and {@code Retry-After} is the store's hint. A rejection by the limiter of a call the
 * application makes to another service ({@link OutboundLimiters}, {@code sluice.client.rules})
 * is none of the client's doing: it becomes {@code 503 Service Unavailable} with
 * {@code Retry-After}, without the limiter's name or rate-limit headers;</li>
 * <li>{@link StoreUnavailableException}, which a limiter with the {@code FAIL_CLOSED} failure
 * policy throws while its store cannot decide, becomes {@code 503 Service Unavailable} with a
 * short {@code Retry-After}: the service is fine, but the call cannot be checked right now.</li>
 * <li>{@link RateLimitKeyException}, thrown when a call's key or cost expression gives no value
 * under the {@code REJECT} key-error policy, becomes {@code 400 Bad Request}: the request lacks
 * what its limit is counted by (an optional header, a field).</li>
 * </ul>
 *
 * <p>The key is never sent. WebFlux applications get the same answers from
 * {@link ReactiveRateLimitExceptionHandler}. Registered by the starter with order
 * {@code Ordered.HIGHEST_PRECEDENCE + 1000}, ahead of the application's usual advice; an
 * application that wants its own answers handles the exceptions in an advice ordered before it.
 */
@RestControllerAdvice
public class RateLimitExceptionHandler {

    private final RateLimitResponseHeaders headers;
    private final URI problemType;
    private final Supplier<OutboundLimiters> outbound;

    RateLimitExceptionHandler(RateLimitResponseHeaders headers, URI problemType, Supplier<OutboundLimiters> outbound) {
        this.headers = headers;
        this.problemType = problemType;
        this.outbound = outbound;
    }

    /**
     * Answers a rejected call.
     *
     * @param rejection the rejection
     * @param request   the request
     * @param response  the response, for the headers
     * @return the 429 problem; the 503 problem when an outbound call's limiter rejected
     */
    @ExceptionHandler(RateLimitExceededException.class)
    public ResponseEntity<ProblemDetail> tooManyRequests(RateLimitExceededException rejection,
                                                         HttpServletRequest request, HttpServletResponse response) {
        if (outbound.get().contains(rejection.limiterName())) {
            return RateLimitProblems.dependencyLimited(rejection);
        }
        headers.writeRejection(request, response, rejection.limiterName(), rejection.decision());
        return RateLimitProblems.tooManyRequests(rejection, problemType);
    }

    /**
     * Answers a call whose limit could not be checked, under {@code FAIL_CLOSED}.
     *
     * @param unavailable what the limiter threw
     * @return the 503 problem
     */
    @ExceptionHandler(StoreUnavailableException.class)
    public ResponseEntity<ProblemDetail> serviceUnavailable(StoreUnavailableException unavailable) {
        return RateLimitProblems.serviceUnavailable(unavailable);
    }

    /**
     * Answers a call whose key or cost could not be worked out from the request, under the
     * {@code REJECT} key-error policy: the request lacks what its limit is counted by.
     *
     * @param error what the engine threw
     * @return the 400 problem
     */
    @ExceptionHandler(RateLimitKeyException.class)
    public ResponseEntity<ProblemDetail> badRequest(RateLimitKeyException error) {
        return RateLimitProblems.badRequest();
    }
}
