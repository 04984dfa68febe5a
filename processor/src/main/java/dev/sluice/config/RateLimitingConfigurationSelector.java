package dev.sluice.config;

import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AdviceModeImportSelector;

/**
 * Chooses the configuration for {@link EnableRateLimiting#mode()}.
 */
public class RateLimitingConfigurationSelector extends AdviceModeImportSelector<EnableRateLimiting> {

    @Override
    protected String[] selectImports(AdviceMode adviceMode) {
        return new String[] {
            RateLimitingConfiguration.class.getName(),
            adviceMode == AdviceMode.PROXY
                    ? ProxyRateLimitingConfiguration.class.getName()
                    : AspectJRateLimitingConfiguration.class.getName()
        };
    }
}
