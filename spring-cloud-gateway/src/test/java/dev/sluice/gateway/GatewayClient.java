package dev.sluice.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** Sends requests to a gateway on a port, as a client with an API key or without one. */
final class GatewayClient {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private final int port;

    GatewayClient(int port) {
        this.port = port;
    }

    /** A GET with the header {@code X-Api-Key}, or without it when {@code apiKey} is null. */
    HttpResponse<String> get(String path, @Nullable String apiKey) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .GET();
        if (apiKey != null) {
            request.header("X-Api-Key", apiKey);
        }
        try {
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
