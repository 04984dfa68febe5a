package dev.sluice.boot.web.reactive;

import dev.sluice.RateLimitExceededException;
import dev.sluice.StoreUnavailableException;
import dev.sluice.aop.RateLimitKeyException;
import dev.sluice.boot.web.OutboundLimiters;
import dev.sluice.boot.web.RateLimitProblems;
import dev.sluice.boot.web.servlet.RateLimitExceptionHandler;
import java.net.URI;
import java.util.function.Supplier;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebExchange;

/**
 * Answers Sluice's exceptions in WebFlux applications exactly as {@link RateLimitExceptionHandler}
 * does in Spring MVC, with the same RFC 9457 {@code application/problem+json} bodies and headers:
 *
 * <ul>
 * <li>{@link RateLimitExceededException} becomes {@code 429 Too Many Requests}, of type
 * {@code sluice.web.problem-type}, whose {@code detail} is the limiter's message and whose
 * {@code violated-policies} names the limiter, with {@code Retry-After} in whole seconds rounded
 * up and the rate-limit headers; also, never as 503, a call rejected because the store was
 * overloaded, whose {@code detail} says {@code "Rate limit store overloaded"};</li>
 * <li>{@link StoreUnavailableException} ({@code FAIL_CLOSED} while the store cannot decide)
 * becomes {@code 503 Service Unavailable} with a short {@code Retry-After};</li>
 * <li>{@link RateLimitKeyException} (a key or cost expression without a value, under the
 * {@code REJECT} key-error policy) becomes {@code 400 Bad Request}.</li>
 * </ul>
 *
 * <p>A reactive method's rejection is an error signal, which reaches this advice like any error
 * of a handler; the refusals of {@code sluice.http.rules} are answered through it too. The key is
 * never sent. Registered by the starter with order {@code Ordered.HIGHEST_PRECEDENCE + 1000},
 * ahead of the application's usual advice; an application that wants its own answers handles the
 * exceptions in an advice ordered before it.
 */
@RestControllerAdvice
public class ReactiveRateLimitExceptionHandler {

    private final ReactiveRateLimitHeaders headers;
    private final URI problemType;
    private final Supplier<OutboundLimiters> outbound;

    ReactiveRateLimitExceptionHandler(ReactiveRateLimitHeaders headers, URI problemType,
                                      Supplier<OutboundLimiters> outbound) {
        this.headers = headers;
        this.problemType = problemType;
        this.outbound = outbound;
    }

    /**
     * Answers a rejected call.
     *
     * @param rejection the rejection
     * @param exchange  the exchange, for the headers
     * @return the 429 problem; the 503 problem when an outbound call's limiter rejected, as
     *         {@link dev.sluice.boot.web.servlet.RateLimitExceptionHandler} answers it
     */
    @ExceptionHandler(RateLimitExceededException.class)
    public ResponseEntity<ProblemDetail> tooManyRequests(RateLimitExceededException rejection,
                                                         ServerWebExchange exchange) {
        if (outbound.get().contains(rejection.limiterName())) {
            return RateLimitProblems.dependencyLimited(rejection);
        }
        headers.writeRejection(exchange, rejection.limiterName(), rejection.decision());
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
     * {@code REJECT} key-error policy.
     *
     * @param error what the engine threw
     * @return the 400 problem
     */
    @ExceptionHandler(RateLimitKeyException.class)
    public ResponseEntity<ProblemDetail> badRequest(RateLimitKeyException error) {
        return RateLimitProblems.badRequest();
    }
}
