package dev.sluice.sample.reactive;

import java.util.List;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The public product catalog, limited without an annotation, as in the servlet sample: the rule
 * {@code product-api} of {@code application.yml} caps every client together at 500 requests per
 * 2 s, 2,000 per 10 s and 10,000 per minute, before this controller runs.
 */
@RestController
public class CatalogController {

    /**
     * The catalog.
     *
     * @return the products on offer
     */
    @GetMapping("/v1/product")
    public Mono<Map<String, List<String>>> catalog() {
        return Mono.just(Map.of("products", List.of("anvil", "rocket skates", "giant magnet")));
    }
}
