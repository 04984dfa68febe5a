package dev.sluice;

/**
 * The queue in which a store's decisions wait to be sent, as metrics and the actuator show it
 * ({@code sluice.store.queue}). A store whose decisions travel together (the Redis store sends
 * many in one script call) has one; its size is bounded, and decisions beyond it get the store's
 * {@link OverloadPolicy}.
 */
public interface StoreQueue {

    /**
     * How many decisions wait now, not yet sent.
     *
     * @return zero or more
     */
    int queued();

    /**
     * The most decisions that may wait at once.
     *
     * @return positive
     */
    int capacity();

    /**
     * How many decisions got the store's {@link OverloadPolicy} so far: refused, or decided in
     * this JVM.
     *
     * @return zero or more, never decreasing
     */
    long overloaded();
}
