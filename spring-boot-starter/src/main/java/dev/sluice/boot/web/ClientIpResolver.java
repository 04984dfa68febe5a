package dev.sluice.boot.web;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
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
 *
 * <p>The address is written one way per client, so that a client cannot get a fresh key by
 * spelling its address differently or by moving within its network:
 *
 * <ul>
 * <li>an IPv4-mapped IPv6 address ({@code ::ffff:203.0.113.9}, in any spelling) is its IPv4
 * address, {@code 203.0.113.9};</li>
 * <li>IPv6 addresses are written as RFC 5952 says (lower case, no leading zeros, the longest run
 * of two or more zero groups as {@code ::});</li>
 * <li>IPv6 clients are grouped by prefix: the address is the network address of the client's
 * prefix followed by its length, such as {@code 2001:db8:1:2::/64}; with prefix 128, the plain
 * address.</li>
 * </ul>
 *
 * <p>Independent of the web stack: Spring MVC hands it the servlet request's remote address and
 * headers, WebFlux those of the {@code ServerHttpRequest}, so that both find the same client. The
 * raw address of the socket stays available to key expressions through {@code #request}
 * ({@code #request.remoteAddr} in Spring MVC, {@code #request.remoteAddress} in WebFlux).
 */
public final class ClientIpResolver {

    private static final Pattern FORWARDED_FOR = Pattern.compile("(?i)(?:^|;)\\s*for=\\s*(\"[^\"]*\"|[^;,\\s]*)");
    // 0 to 255 only: InetAddress would look a quad with a larger number up as a host name.
    private static final String OCTET = "(?:25[0-5]|2[0-4]\\d|[01]?\\d?\\d)";
    private static final Pattern IPV4 = Pattern.compile(OCTET + "(\\." + OCTET + "){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:]*:[0-9a-fA-F:.]*");
    private static final Pattern IPV4_WITH_PORT = Pattern.compile("(\\d{1,3}(?:\\.\\d{1,3}){3}):\\d+");

    private final List<Range> trusted;
    private final ForwardingHeader header;
    private final int ipv6Prefix;

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
     *                       {@code fd00::/8}) of the proxies in front of the application; an
     *                       IPv4-mapped range ({@code ::ffff:10.0.0.0/104}) is its IPv4 range
     *                       ({@code 10.0.0.0/8})
     * @param header         the header those proxies set; the other one is ignored
     * @param ipv6Prefix     the prefix length, from 1 to 128, IPv6 clients are grouped by
     *                       ({@code sluice.web.ipv6-prefix}); 128 for one key per address
     * @throws IllegalArgumentException when an entry is neither an address nor a range, or when
     *                                  the prefix length is out of range
     */
    public ClientIpResolver(List<String> trustedProxies, ForwardingHeader header, int ipv6Prefix) {
        if (ipv6Prefix < 1 || ipv6Prefix > 128) {
            throw new IllegalArgumentException(
                    "sluice.web.ipv6-prefix must be from 1 to 128, not " + ipv6Prefix);
        }
        this.trusted = trustedProxies.stream().map(Range::parse).toList();
        this.header = Objects.requireNonNull(header, "header");
        this.ipv6Prefix = ipv6Prefix;
    }

    /**
     * The client's address.
     *
     * @param remoteAddress the address of the socket's peer as text, as the server gives it
     *                      ({@code 203.0.113.9}, {@code 2001:db8::1}); {@code null} when unknown
     * @param headerValues  the values of a request header by its name, each value as sent (one
     *                      value may list several addresses); an empty list, never {@code null},
     *                      for a header the request does not have
     * @return the address the socket or the nearest untrusted hop gives, normalised as the
     *         class description says; the socket's remote address as it is when that is not an
     *         IP address
     */
    public @Nullable String resolve(@Nullable String remoteAddress,
                                    Function<String, ? extends List<String>> headerValues) {
        InetAddress client = literal(remoteAddress);
        if (client == null) {
            return remoteAddress;
        }
        if (isTrusted(client)) {
            List<String> hops = hops(headerValues);
            Collections.reverse(hops);
            for (String hop : hops) {
                InetAddress address = literal(hop);
                if (address == null) {
                    break;
                }
                client = address;
                if (!isTrusted(address)) {
                    break;
                }
            }
        }
        return key(client);
    }

    /**
     * The text of an address: IPv4 in dotted decimal, IPv6 as the RFC 5952 text of the network
     * address of its prefix.
     */
    private String key(InetAddress address) {
        // InetAddress gives an IPv4-mapped literal (::ffff:a.b.c.d, in any spelling) as its IPv4 address.
        if (address instanceof Inet4Address) {
            return address.getHostAddress();
        }
        byte[] bytes = address.getAddress();
        if (ipv6Prefix == 128) {
            return ipv6Text(bytes);
        }
        for (int bit = ipv6Prefix; bit < 128; bit++) {
            bytes[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return ipv6Text(bytes) + "/" + ipv6Prefix;
    }

    /** The RFC 5952 text of a 16-byte address. */
    private static String ipv6Text(byte[] bytes) {
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = (bytes[2 * i] & 0xff) << 8 | bytes[2 * i + 1] & 0xff;
        }
        // The longest run of two or more zero groups, the first one on a tie, becomes "::".
        int runStart = -1;
        int runLength = 1;
        for (int start = 0; start < 8; start++) {
            int end = start;
            while (end < 8 && groups[end] == 0) {
                end++;
            }
            if (end - start > runLength) {
                runStart = start;
                runLength = end - start;
            }
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == runStart) {
                text.append("::");
                i += runLength - 1;
            } else {
                if (!text.isEmpty() && text.charAt(text.length() - 1) != ':') {
                    text.append(':');
                }
                text.append(Integer.toHexString(groups[i]));
            }
        }
        return text.toString();
    }

    /** The addresses the header lists, client first, each without port or brackets. */
    private List<String> hops(Function<String, ? extends List<String>> headerValues) {
        List<String> hops = new ArrayList<>();
        String name = header == ForwardingHeader.FORWARDED ? "Forwarded" : "X-Forwarded-For";
        for (String value : headerValues.apply(name)) {
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

    private boolean isTrusted(InetAddress address) {
        return trusted.stream().anyMatch(range -> range.contains(address));
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
            // An IPv4-mapped range (::ffff:10.0.0.0/104) is parsed as IPv4: its prefix counts 96 bits more.
            int mappedBits = address instanceof Inet4Address && parts[0].contains(":") ? 96 : 0;
            int prefix;
            try {
                prefix = parts.length == 2 ? Integer.parseInt(parts[1]) : mappedBits + bits;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + cidr + "' has an invalid prefix length", e);
            }
            if (prefix < mappedBits || prefix > mappedBits + bits) {
                throw new IllegalArgumentException("'" + cidr + "' has a prefix length outside "
                        + mappedBits + ".." + (mappedBits + bits));
            }
            return new Range(address.getAddress(), prefix - mappedBits);
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
