package dev.sluice.sample;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;

/**
 * The one-time code last issued to each phone number, kept in memory. Numbers are compared by
 * their digits, so that {@code +44 7700-900123} and {@code +447700900123} are one number.
 */
@Component
public class OneTimeCodes {

    private final SecureRandom random = new SecureRandom();
    private final Map<String, String> codes = new ConcurrentHashMap<>();

    /**
     * Issues a new code for a number, replacing the one issued before.
     *
     * @param phone the number
     * @return the code: six digits
     */
    public String issue(String phone) {
        String code = "%06d".formatted(random.nextInt(1_000_000));
        codes.put(digits(phone), code);
        return code;
    }

    /**
     * Whether a code is the one last issued for a number.
     *
     * @param phone the number
     * @param code  the code given
     * @return {@code false} also when no code was issued for the number
     */
    public boolean matches(String phone, String code) {
        String issued = codes.get(digits(phone));
        return issued != null && MessageDigest.isEqual(issued.getBytes(StandardCharsets.UTF_8),
                code.getBytes(StandardCharsets.UTF_8));
    }

    private static String digits(String phone) {
        return phone.replaceAll("[^+0-9]", "");
    }
}
