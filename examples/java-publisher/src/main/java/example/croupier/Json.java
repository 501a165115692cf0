package example.croupier;

import java.util.List;
import java.util.Map;

/** JSON text of an event: an object of strings, integers and lists of integers, in order. */
final class Json {
    private Json() {}

    static String write(Map<String, Object> object) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, Object> entry : object.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            string(out, entry.getKey());
            out.append(':');
            value(out, entry.getValue());
        }
        return out.append('}').toString();
    }

    private static void value(StringBuilder out, Object value) {
        if (value instanceof String s) {
            string(out, s);
        } else if (value instanceof Integer || value instanceof Long) {
            out.append(value);
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                value(out, list.get(i));
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("not a JSON value here: " + value);
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
