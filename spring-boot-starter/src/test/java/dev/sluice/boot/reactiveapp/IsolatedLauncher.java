package dev.sluice.boot.reactiveapp;

import java.io.Closeable;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starts the WebFlux test application from a class loader of its own, for tests whose class path
 * must differ from the test's: they call it by reflection and see only JDK types.
 */
public final class IsolatedLauncher {

    private IsolatedLauncher() {
    }

    /**
     * Starts the application on a free port.
     *
     * @param arguments its command-line arguments
     * @return the running application, to close
     */
    public static Closeable start(String... arguments) {
        return new SpringApplicationBuilder(ReactiveLimitedApp.class).properties("spring.config.name=reactive")
                .run(arguments);
    }

    /**
     * The port an application started here listens on.
     *
     * @param application what {@link #start} returned
     * @return the port
     */
    public static int port(Closeable application) {
        return ((ConfigurableApplicationContext) application).getEnvironment()
                .getRequiredProperty("local.server.port", Integer.class);
    }

    /**
     * The class of the application's web server.
     *
     * @param application what {@link #start} returned
     * @return the class name
     */
    public static String webServer(Closeable application) throws ReflectiveOperationException {
        // The web server application context's interface has a package of its own on each Spring Boot line.
        return application.getClass().getMethod("getWebServer").invoke(application).getClass().getName();
    }

    /**
     * Whether the application has a bean of the named class.
     *
     * @param application what {@link #start} returned
     * @param type        a class name
     * @return whether it has one
     */
    public static boolean hasBean(Closeable application, String type) throws ClassNotFoundException {
        ConfigurableApplicationContext context = (ConfigurableApplicationContext) application;
        return context.getBeanNamesForType(Class.forName(type, false, IsolatedLauncher.class.getClassLoader())).length > 0;
    }
}
