package dev.sluice.boot;

import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Finds the address of the client behind a request: the value of {@code #ip} in key
 * expressions. The forwarding header the proxies set ({@code X-Forwarded-For}, or
 * {@code Forwarded}) counts only when the direct peer is a trusted proxy; the chain is then
 * walked from the right, past trusted proxies, to the first hop that is not one. A hop that is
 * not an IP address ends the walk at the last trusted proxy. Without trusted proxies, the
 * socket's remote address is the client, so a client cannot choose its own key by sending a
 * header.
 */
public final class ClientIpResolver {

    private static final Pattern FORWARDED_FOR = Pattern.compile("(?i)(?:^|;)\\s*for=\\s*(\"[^\"]*\"|[^;,\\s]*)");
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:]*:[0-9a-fA-F:.]*");
    private static final Pattern IPV4_WITH_PORT = Pattern.compile("(\\d{1,3}(?:\\.\\d{1,3}){3}):\\d+");

    private final List<Range> trusted;
    private final ForwardingHeader header;

    /** The header trusted proxies put the chain of addresses in. */
    public enum ForwardingHeader {
        /** {@code X-Forwarded-For: client, proxy1, proxy2}. */
        X_FORWARDED_FOR,
        /** {@code Forwarded: for=client, for=proxy1} (RFC 7239). */
        FORWARDED
    }

    /**
     * Creates a resolver.
     *
     * @param trustedProxies addresses ({@code 10.0.0.7}) or CIDR ranges ({@code 10.0.0.0/8},
     *                       {@code fd00::/8}) of the proxies in front of the application
     * @param header         the header those proxies set; the other one is ignored
     * @throws IllegalArgumentException when an entry is neither an address nor a range
     */
    public ClientIpResolver(List<String> trustedProxies, ForwardingHeader header) {
        this.trusted = trustedProxies.stream().map(Range::parse).toList();
        this.header = Objects.requireNonNull(header, "header");
    }

    /**
     * The client's address.
     *
     * @param request the request
     * @return the address the socket or the nearest untrusted hop gives
     */
    public String resolve(HttpServletRequest request) {
        String client = request.getRemoteAddr();
        if (!isTrusted(client)) {
            return client;
        }
        List<String> hops = hops(request);
        Collections.reverse(hops);
        for (String hop : hops) {
            if (literal(hop) == null) {
                break;
            }
            client = hop;
            if (!isTrusted(hop)) {
                break;
            }
        }
        return client;
    }

    /** The addresses the header lists, client first, each without port or brackets. */
    private List<String> hops(HttpServletRequest request) {
        List<String> hops = new ArrayList<>();
        String name = header == ForwardingHeader.FORWARDED ? "Forwarded" : "X-Forwarded-For";
        for (String value : Collections.list(request.getHeaders(name))) {
            for (String element : value.split(",")) {
                if (header == ForwardingHeader.FORWARDED) {
                    Matcher matcher = FORWARDED_FOR.matcher(element);
                    hops.add(matcher.find() ? address(matcher.group(1)) : "");
                } else {
                    hops.add(address(element));
                }
            }
        }
        return hops;
    }

    /** A node as written in a header, without quotes, brackets or port. */
    private static String address(String node) {
        String address = node.replace("\"", "").trim();
        if (address.startsWith("[")) {
            int end = address.indexOf(']');
            return end > 0 ? address.substring(1, end) : address;
        }
        Matcher withPort = IPV4_WITH_PORT.matcher(address);
        return withPort.matches() ? withPort.group(1) : address;
    }

    private boolean isTrusted(String address) {
        InetAddress parsed = literal(address);
        return parsed != null && trusted.stream().anyMatch(range -> range.contains(parsed));
    }

    /** The address an IP literal spells, never looking a name up; {@code null} for anything else. */
    private static @Nullable InetAddress literal(@Nullable String text) {
        if (text == null || !(IPV4.matcher(text).matches() || IPV6.matcher(text).matches())) {
            return null;
        }
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** An address range: a network address and the length of its prefix. */
    private record Range(byte[] network, int prefix) {

        static Range parse(String cidr) {
            String[] parts = cidr.trim().split("/", 2);
            InetAddress address = literal(parts[0]);
            if (address == null) {
                throw new IllegalArgumentException("'" + cidr + "' is not an IP address or CIDR range");
            }
            int bits = address.getAddress().length * 8;
            int prefix;
            try {
                prefix = parts.length == 2 ? Integer.parseInt(parts[1]) : bits;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + cidr + "' has an invalid prefix length", e);
            }
            if (prefix < 0 || prefix > bits) {
                throw new IllegalArgumentException("'" + cidr + "' has a prefix length outside 0.." + bits);
            }
            return new Range(address.getAddress(), prefix);
        }

        boolean contains(InetAddress address) {
            byte[] bytes = address.getAddress();
            if (bytes.length != network.length) {
                return false;
            }
            for (int bit = 0; bit < prefix; bit++) {
                int mask = 0x80 >>> (bit % 8);
                if ((bytes[bit / 8] & mask) != (network[bit / 8] & mask)) {
                    return false;
                }
            }
            return true;
        }
    }
}
