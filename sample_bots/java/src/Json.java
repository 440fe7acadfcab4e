import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A tiny JSON reader and writer, enough for the arena's stdio protocol (no library needed).
 *
 * <p>{@link #parse} reads one JSON text into plain Java values: an object becomes a
 * {@code Map<String, Object>} (keys in their order), an array a {@code List<Object>}, a string a
 * {@code String}, a number a {@code Long} (a whole number) or a {@code Double}, {@code true} and
 * {@code false} a {@code Boolean}, {@code null} null. {@link #write} turns such values back into
 * one line of JSON.
 */
public final class Json {
    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** The value of the JSON text {@code text}; an {@code IllegalArgumentException} if it is not JSON. */
    public static Object parse(String text) {
        Json p = new Json(text);
        p.space();
        Object value = p.value();
        p.space();
        if (p.at != text.length()) {
            throw p.error("text after the value");
        }
        return value;
    }

    /** One line of JSON for {@code value} (maps, lists, strings, numbers, booleans, null). */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    // -- reading ---------------------------------------------------------------------------
    private Object value() {
        if (at >= text.length()) {
            throw error("a value expected");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{': return object();
            case '[': return array();
            case '"': return string();
            case 't': return word("true", Boolean.TRUE);
            case 'f': return word("false", Boolean.FALSE);
            case 'n': return word("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Map<String, Object> object() {
        Map<String, Object> out = new LinkedHashMap<>();
        at++; // {
        space();
        if (peek() == '}') {
            at++;
            return out;
        }
        while (true) {
            space();
            if (peek() != '"') {
                throw error("a key (a string) expected");
            }
            String key = string();
            space();
            expect(':');
            space();
            out.put(key, value());
            space();
            char c = next();
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                throw error("',' or '}' expected");
            }
        }
    }

    private List<Object> array() {
        List<Object> out = new ArrayList<>();
        at++; // [
        space();
        if (peek() == ']') {
            at++;
            return out;
        }
        while (true) {
            space();
            out.add(value());
            space();
            char c = next();
            if (c == ']') {
                return out;
            }
            if (c != ',') {
                throw error("',' or ']' expected");
            }
        }
    }

    private String string() {
        at++; // "
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') {
                return out.toString();
            }
            if (c == '\\') {
                char e = next();
                switch (e) {
                    case '"': out.append('"'); break;
                    case '\\': out.append('\\'); break;
                    case '/': out.append('/'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        if (at + 4 > text.length()) {
                            throw error("a \\u escape cut short");
                        }
                        try {
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("a bad \\u escape");
                        }
                        at += 4;
                        break;
                    default:
                        throw error("a bad escape '\\" + e + "'");
                }
            } else if (c < 0x20) {
                throw error("a control character in a string");
            } else {
                out.append(c);
            }
        }
    }

    private Object number() {
        int start = at;
        if (peek() == '-') {
            at++;
        }
        boolean whole = true;
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c >= '0' && c <= '9') {
                at++;
            } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                whole = false;
                at++;
            } else {
                break;
            }
        }
        String digits = text.substring(start, at);
        try {
            return whole ? (Object) Long.parseLong(digits) : (Object) Double.parseDouble(digits);
        } catch (NumberFormatException ex) {
            throw error("a bad number '" + digits + "'");
        }
    }

    private Object word(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("'" + word + "' expected");
        }
        at += word.length();
        return value;
    }

    private void space() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            at++;
        }
    }

    private char peek() {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private char next() {
        if (at >= text.length()) {
            throw error("the text ends too soon");
        }
        return text.charAt(at++);
    }

    private void expect(char c) {
        if (next() != c) {
            throw error("'" + c + "' expected");
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("JSON: " + what + " at character " + at);
    }

    // -- writing ---------------------------------------------------------------------------
    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            quote((String) value, out);
        } else if (value instanceof Boolean || value instanceof Long || value instanceof Integer) {
            out.append(value);
        } else if (value instanceof Number) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("JSON: no such number as " + d);
            }
            out.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d)
                                                                  : Double.toString(d));
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote(String.valueOf(e.getKey()), out);
                out.append(':');
                write(e.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object v : (List<?>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(v, out);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("JSON: cannot write a " + value.getClass());
        }
    }

    private static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }
}
