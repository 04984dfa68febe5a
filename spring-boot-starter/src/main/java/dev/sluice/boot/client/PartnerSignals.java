package dev.sluice.boot.client;

/**
 * Hears what partners say in their answers to the requests of {@code sluice.client.rules}, for
 * metrics. Public for the metrics auto-configuration, in its own package, which counts the signals
 * as {@code sluice.client.partner.signals} when the application has a meter registry.
 */
@FunctionalInterface
public interface PartnerSignals {

    /** Hears nothing. */
    PartnerSignals NONE = (rule, signal) -> { };

    /**
     * One signal of a partner's answer.
     *
     * @param rule   the rule whose request was answered
     * @param signal {@code pause}, {@code quota} (a changed quota) or {@code ignored} (a value
     *               that was not used)
     */
    void heard(String rule, String signal);
}
