package dev.sluice.redisson;

import dev.sluice.redisson.RedissonRateLimitStore.Call;
import dev.sluice.redisson.ScriptPipeline.ScriptCall;
import java.util.List;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;

/** Runs {@code decide.lua} for calls as one script call, outside any store's queue and deadline. */
final class DecideScript {

    private DecideScript() {
    }

    /**
     * Decides calls in the order given, in one script call.
     *
     * @param client   the client to run it with
     * @param calls    calls made by a store, for keys in one hash slot
     * @param deadline the server's time after which none is decided, or NaN for none
     * @return each call's reply, as {@link DecisionCodec#figure} reads it
     */
    static List<byte[]> run(RedissonClient client, List<Call> calls, double deadline) {
        ScriptCall script = ScriptCall.of(calls, deadline);
        byte[] replies = client.getScript(DecisionCodec.INSTANCE).eval(script.keys().get(0).toString(),
                RScript.Mode.READ_WRITE, RedissonRateLimitStore.SCRIPT, RScript.ReturnType.VALUE, script.keys(),
                script.arguments());
        return ScriptCall.replies(replies, calls);
    }

    /** {@link #run(RedissonClient, List, double)} for one call, without a deadline. */
    static byte[] run(RedissonClient client, Call call) {
        return run(client, List.of(call), Double.NaN).get(0);
    }
}
