package dev.sluice.boot;

import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What one class logs while this is open, read where it logs (a {@code System.Logger}, by
 * default java.util.logging) rather than from the console, which Spring Boot's logging reaches
 * only once some application in the test's JVM has set it up. Public for the tests of each of
 * the starter's packages.
 */
public final class LoggedMessages extends Handler implements AutoCloseable {

    private final Logger logger;
    private final StringBuilder messages = new StringBuilder();

    public LoggedMessages(Class<?> logging) {
        logger = Logger.getLogger(logging.getName());
        logger.addHandler(this);
    }

    /** Every message so far, a line each. */
    public String messages() {
        synchronized (messages) {
            return messages.toString();
        }
    }

    @Override
    public void publish(LogRecord record) {
        synchronized (messages) {
            messages.append(record.getMessage()).append('\n');
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
