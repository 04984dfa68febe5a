package dev.sluice.boot;

import java.time.Duration;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.netty.http.client.HttpClient;

/** HTTP clients of the servers the tests start on this machine. */
public final class LocalServer {

    private LocalServer() {
    }

    /**
     * A client of the server listening on {@code port} of the loopback address: it waits up to
     * 30 s for an answer, as a first request on a machine busy with another build may take more
     * than the default 5 s, and opens a connection of its own per request, as a refused POST
     * whose body the server never read may close its connection just as a pooled client picks it
     * up for the next request.
     *
     * @param port the server's port
     * @return the client
     */
    public static WebTestClient client(int port) {
        return WebTestClient.bindToServer(new ReactorClientHttpConnector(HttpClient.newConnection()))
                .baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(30)).build();
    }
}
