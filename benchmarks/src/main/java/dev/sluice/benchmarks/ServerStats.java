package dev.sluice.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * What a {@code redis-server} has spent so far, from {@code INFO cpu commandstats stats}, read
 * over a connection of its own so that neither the clients measured nor a {@code redis-cli}
 * process stand in the way: the difference of two samples is what a measurement cost the server.
 *
 * @param cpuSeconds   the server's CPU time, system and user ({@code used_cpu_sys + used_cpu_user})
 * @param scriptCalls  calls of Lua scripts ({@code EVAL}, {@code EVALSHA} and their read-only forms)
 * @param scriptMicros the time those calls took, in microseconds, commands they ran included
 * @param netBytes     bytes the server read and wrote on all connections
 *                     ({@code total_net_input_bytes + total_net_output_bytes}); in a difference,
 *                     less what the two samples' own {@code INFO} requests and replies added
 * @param infoBytes    what this sample's own {@code INFO} reply put on the wire, which the server
 *                     counts only after it was sampled; zero in a difference
 */
record ServerStats(double cpuSeconds, long scriptCalls, long scriptMicros, long netBytes, long infoBytes) {

    private static final byte[] INFO_REQUEST = "INFO cpu commandstats stats\r\n".getBytes(StandardCharsets.US_ASCII);

    /**
     * The commands that run scripts. Commands a script runs are counted under their own names as
     * well, inside the script's time, so only the scripts themselves are summed.
     */
    private static final Set<String> SCRIPT_COMMANDS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro");

    /**
     * Samples a server.
     *
     * @param port the server's port on the loopback interface
     * @return what it has spent since it started
     */
    static ServerStats sample(int port) {
        String info = info(port);
        double cpuSeconds = 0;
        long scriptCalls = 0;
        long scriptMicros = 0;
        long netBytes = 0;
        for (String line : info.split("\r\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                cpuSeconds += Double.parseDouble(line.substring(line.indexOf(':') + 1));
            } else if (line.startsWith("total_net_input_bytes:") || line.startsWith("total_net_output_bytes:")) {
                netBytes += Long.parseLong(line.substring(line.indexOf(':') + 1));
            } else if (line.startsWith("cmdstat_")
                    && SCRIPT_COMMANDS.contains(line.substring("cmdstat_".length(), line.indexOf(':')))) {
                for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (field.startsWith("calls=")) {
                        scriptCalls += Long.parseLong(field.substring("calls=".length()));
                    } else if (field.startsWith("usec=")) {
                        scriptMicros += Long.parseLong(field.substring("usec=".length()));
                    }
                }
            }
        }
        // The reply as sent: "$<length>\r\n<text>\r\n".
        int length = info.getBytes(StandardCharsets.UTF_8).length;
        int replyBytes = String.valueOf(length).length() + length + 5;
        return new ServerStats(cpuSeconds, scriptCalls, scriptMicros, netBytes, replyBytes);
    }

    /**
     * What the server spent between an earlier sample and this one. The bytes leave out the
     * earlier sample's reply and this one's request, which the server counted in between.
     *
     * @param earlier the earlier sample
     * @return the differences
     */
    ServerStats since(ServerStats earlier) {
        return new ServerStats(cpuSeconds - earlier.cpuSeconds, scriptCalls - earlier.scriptCalls,
                scriptMicros - earlier.scriptMicros, netBytes - earlier.netBytes - earlier.infoBytes
                - INFO_REQUEST.length, 0);
    }

    /** The reply to {@code INFO cpu commandstats stats}: one bulk string, {@code $<length>\r\n<text>\r\n}. */
    private static String info(int port) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            OutputStream out = socket.getOutputStream();
            out.write(INFO_REQUEST);
            out.flush();
            InputStream in = socket.getInputStream();
            String header = line(in);
            if (!header.startsWith("$")) {
                throw new IllegalStateException("INFO answered " + header);
            }
            byte[] text = in.readNBytes(Integer.parseInt(header.substring(1)));
            return new String(text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("connection closed");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }
}
