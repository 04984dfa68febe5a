package dev.sluice.boot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Plain HTTP calls to the application under test, on its random port. */
final class HttpClient {

    private final java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    private final int port;

    HttpClient(int port) {
        this.port = port;
    }

    HttpResponse<String> get(String path, String... headers) {
        return send(HttpRequest.newBuilder(uri(path)).GET(), headers);
    }

    HttpResponse<String> postJson(String path, String json, String... headers) {
        return send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)), headers);
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private HttpResponse<String> send(HttpRequest.Builder request, String... headers) {
        if (headers.length > 0) {
            request.headers(headers);
        }
        try {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
