package dev.sluice.boot;

/**
 * Hears what partners say in their answers to the requests of {@code sluice.client.rules}, for
 * metrics: {@code sluice.client.partner.signals} counts them when the application has a meter
 * registry.
 */
@FunctionalInterface
interface PartnerSignals {

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
