package dev.sluice;

/**
 * Text that may come from a request (a plan name, a key, a store's message quoting one) made fit
 * for one log line: line breaks and other control or format characters are escaped, so what a
 * client sends can neither end the line and forge the next one nor hide part of it. Backslashes
 * are escaped too, so that an escape in the log always means an escaped character.
 */
final class LogText {

    private LogText() {
    }

    /**
     * The text, escaped: {@code \r}, {@code \n}, {@code \t} and {@code \\} as in Java, other control,
     * line-separator and format characters as {@code \}{@code uXXXX}.
     *
     * @param text text that may come from a request
     * @return the text on one line
     */
    static String escape(String text) {
        StringBuilder escaped = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String replacement = switch (c) {
                case '\\' -> "\\\\";
                case '\r' -> "\\r";
                case '\n' -> "\\n";
                case '\t' -> "\\t";
                default -> needsEscape(c) ? String.format("\\u%04x", (int) c) : null;
            };
            if (replacement != null && escaped == null) {
                escaped = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (escaped != null) {
                if (replacement != null) {
                    escaped.append(replacement);
                } else {
                    escaped.append(c);
                }
            }
        }
        return escaped == null ? text : escaped.toString();
    }

    private static boolean needsEscape(char c) {
        int type = Character.getType(c);
        return Character.isISOControl(c) || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR
                || type == Character.FORMAT;
    }
}
