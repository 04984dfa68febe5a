package dev.sluice.redisson;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import org.jspecify.annotations.Nullable;

/**
 * Whether the machine's CPU is saturated, as the JVM's operating system bean reports it: then a
 * reply that came late may have been waiting for this JVM to read it, not for Redis to send it.
 */
final class MachineLoad {

    /** The share of all cores busy from which the machine counts as saturated. */
    private static final double SATURATED = 0.9;

    private static final @Nullable OperatingSystemMXBean SYSTEM =
            ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean bean ? bean : null;

    private MachineLoad() {
    }

    /**
     * Whether every core of the machine has been busy of late.
     *
     * @return {@code true} when the recent load of all cores is 90% or more; {@code false} when
     *         it is less, or not known
     */
    static boolean saturated() {
        return SYSTEM != null && SYSTEM.getCpuLoad() >= SATURATED;
    }
}
