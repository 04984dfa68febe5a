package dev.sluice.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

/** The service behind the gateways in tests: answers every request {@code 200 backend:<path>}, on a free loopback port. */
final class Backend implements AutoCloseable {

    private final HttpServer server;

    private Backend(HttpServer server) {
        this.server = server;
    }

    static Backend start() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            server.createContext("/", exchange -> {
                byte[] body = ("backend:" + exchange.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.setExecutor(Executors.newFixedThreadPool(4));
            server.start();
            return new Backend(server);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String uri() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
