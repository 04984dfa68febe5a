package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimitExceededException;
import dev.sluice.test.app.OtpApp;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;

/** Without {@link AutoConfigureSluiceTest}, the listener leaves counts and clocks alone. */
@SpringBootTest(classes = OtpApp.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WithoutTheAnnotationTest {

    private static final String PHONE = "+447700900456";

    @Autowired
    private OtpApp.OtpService otp;

    @Test
    @Order(1)
    void aTestUsesTheWholeLimit(@Autowired ApplicationContext context) {
        assertThat(context.getBeanProvider(SluiceTestReset.class).getIfAvailable()).isNull();
        for (int i = 0; i < 3; i++) {
            otp.send(PHONE);
        }
    }

    @Test
    @Order(2)
    void theNextTestSeesItsCounts() {
        assertThatThrownBy(() -> otp.send(PHONE)).isInstanceOf(RateLimitExceededException.class);
    }
}
