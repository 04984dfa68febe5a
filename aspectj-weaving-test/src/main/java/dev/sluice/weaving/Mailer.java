package dev.sluice.weaving;

import dev.sluice.annotation.OnLimit;
import dev.sluice.annotation.RateLimited;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Mono;

/** A plain class, not managed by Spring, whose limits are woven in by the AspectJ compiler. */
public class Mailer {

    private final List<String> sent = new ArrayList<>();

    /**
     * Sends a mail, at most 2 a minute per address.
     *
     * @param address the address
     */
    @RateLimited(key = "#address", limit = 2, window = "1m")
    public void send(String address) {
        sent.add(address);
    }

    /**
     * Sends to every address through {@link #send}: a call on {@code this}, which Spring proxies
     * would not see.
     *
     * @param addresses the addresses
     */
    public void sendAll(List<String> addresses) {
        addresses.forEach(this::send);
    }

    /**
     * Sends a mail when subscribed, at most 2 a minute per address: each subscription is a call.
     *
     * @param address the address
     * @return the address, once sent
     */
    @RateLimited(name = "Mailer.sendLater", key = "#address", limit = 2, window = "1m")
    public Mono<String> sendLater(String address) {
        return Mono.fromCallable(() -> {
            sent.add("later:" + address);
            return address;
        });
    }

    /**
     * Sends a digest, at most one a second per address, waiting for a slot.
     *
     * @param address the address
     */
    @RateLimited(key = "#address", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "5s")
    public void sendDigest(String address) {
        sent.add("digest:" + address);
    }

    /**
     * Checks an address, at most once a minute in all.
     *
     * @param address the address
     * @return whether it looks valid
     */
    @RateLimited(limit = 1, window = "1m")
    public static boolean verify(String address) {
        return address.contains("@");
    }

    /**
     * What was sent.
     *
     * @return the addresses, in order
     */
    public List<String> sent() {
        return sent;
    }
}
