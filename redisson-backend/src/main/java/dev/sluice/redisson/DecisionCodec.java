package dev.sluice.redisson;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.redisson.client.codec.ByteArrayCodec;
import org.redisson.client.codec.StringCodec;
import org.redisson.client.protocol.Decoder;
import org.redisson.client.protocol.Encoder;

/**
 * How decisions travel: arguments as {@link StringCodec} writes them but byte arrays as they
 * are, and the reply of {@code decide.lua}, figures packed as little-endian doubles, as its
 * bytes. A decision's arguments are byte arrays, its id and its figures packed the same way,
 * wrapped as they are: a string would be copied into a pooled buffer, which Redisson never
 * releases when a batch fails before it is written. Redisson would read
 * a reply of integers into a list, making a string and a {@code Long} of every figure; the
 * packed reply is one array, read in place. Every figure is a whole number below 2^53, so each
 * double holds it exactly. The store's other scripts reply with integers, which Redisson reads
 * whatever the codec.
 */
final class DecisionCodec extends StringCodec {

    static final DecisionCodec INSTANCE = new DecisionCodec();

    private static final VarHandle DOUBLES = MethodHandles.byteArrayViewVarHandle(double[].class,
            ByteOrder.LITTLE_ENDIAN);

    private static final Encoder ENCODER = value -> (value instanceof byte[]
            ? ByteArrayCodec.INSTANCE : StringCodec.INSTANCE).getValueEncoder().encode(value);

    private DecisionCodec() {
    }

    @Override
    public Encoder getValueEncoder() {
        return ENCODER;
    }

    @Override
    public Decoder<Object> getValueDecoder() {
        return ByteArrayCodec.INSTANCE.getValueDecoder();
    }

    /**
     * One figure of a reply.
     *
     * @param reply the reply's bytes
     * @param index the figure's position, from 0
     * @return the figure
     */
    static long figure(byte[] reply, int index) {
        return (long) (double) DOUBLES.get(reply, index * Double.BYTES);
    }

    /**
     * A copy of packed figures with one figure replaced.
     *
     * @param figures the figures, little-endian doubles from the start
     * @param index   the figure's position, from 0
     * @param value   its new value
     * @return the copy
     */
    static byte[] withFigure(byte[] figures, int index, double value) {
        byte[] copy = figures.clone();
        setFigure(copy, index, value);
        return copy;
    }

    /**
     * Replaces one figure of packed figures.
     *
     * @param figures the figures, little-endian doubles from the start
     * @param index   the figure's position, from 0
     * @param value   its new value
     */
    static void setFigure(byte[] figures, int index, double value) {
        DOUBLES.set(figures, index * Double.BYTES, value);
    }
}
