package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a client sent, once escaped, cannot end a log line, forge the next one or hide part of itself. */
class LogTextTest {

    @Test
    void escapesLineBreaksControlAndFormatCharactersAndBackslashes() {
        assertThat(LogText.escape("gold\r\nFORGED\tline\u0000\u001b[31m\u0085\u2028\u2029\u202eevil\\n"))
                .isEqualTo("gold\\r\\nFORGED\\tline\\u0000\\u001b[31m\\u0085\\u2028\\u2029\\u202eevil\\\\n");
    }

    @Test
    void leavesPrintableTextAsItIs() {
        String printable = "Plan gold: café, 東京, +44 7700 900123 {tenant}";
        assertThat(LogText.escape(printable)).isSameAs(printable);
    }
}
