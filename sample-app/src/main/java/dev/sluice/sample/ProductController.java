package dev.sluice.sample;

import dev.sluice.annotation.RateLimited;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * An organization's products, limited per organization: the annotations name the limiters, their
 * key and how a call's plan is found, and {@code application.yml} sets the limits (free plan:
 * 1,000 reads and 100 writes per 10 s; pro plan: 5,000 and 500), so an operator can change them
 * without a rebuild, or live through the actuator.
 */
@RestController
public class ProductController {

    /**
     * A product.
     *
     * @param id    its identifier
     * @param name  its name
     * @param price its price in cents
     */
    public record Product(String id, String name, long price) {
    }

    private final Map<String, Product> products = new ConcurrentHashMap<>();

    /**
     * Reads a product.
     *
     * @param orgId the organization
     * @param id    the product
     * @return the product, or 404
     */
    @GetMapping("/api/organizations/{orgId}/products/{id}")
    @RateLimited(name = "org-reads", key = "#orgId", plan = "@organizationPlans.planOf(#orgId)")
    public ResponseEntity<Product> read(@PathVariable String orgId, @PathVariable String id) {
        Product product = products.get(orgId + "/" + id);
        return product == null ? ResponseEntity.notFound().build() : ResponseEntity.ok(product);
    }

    /**
     * Creates or replaces a product.
     *
     * @param orgId   the organization
     * @param id      the product
     * @param product the new state
     * @return the stored product
     */
    @PutMapping("/api/organizations/{orgId}/products/{id}")
    @RateLimited(name = "org-writes", key = "#orgId", plan = "@organizationPlans.planOf(#orgId)")
    public Product write(@PathVariable String orgId, @PathVariable String id, @RequestBody Product product) {
        Product stored = new Product(id, product.name(), product.price());
        products.put(orgId + "/" + id, stored);
        return stored;
    }
}
