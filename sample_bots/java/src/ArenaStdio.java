import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ArenaStdio.java: the stdio protocol of Shengji Arena for a Java bot, JDK 17 only, with a
 * small JSON reader and writer of its own.
 *
 * <p>Copy this file next to your bot's source, compile both
 * ({@code javac --release 17 -d build src/ArenaStdio.java src/Bot.java}) and call
 * {@link #play} with your decide function:
 *
 * <pre>{@code
 * public static void main(String[] args) throws IOException {
 *     ArenaStdio.play(turn -> turn.actions.get(0)); // the first listed action is legal
 * }
 * }</pre>
 *
 * <p>{@code play} reads the referee's JSON lines on standard input, keeps what the seat was
 * told (its seat, the variant, the latest observation and hint, the events since its previous
 * turn), calls decide once per request and writes the answer line,
 * {@code {"request_id": ..., "action": {...}}}, flushed at once. It logs to standard error (the
 * seat's log; standard output carries answers only) and returns at {@code match_end} or at the
 * end of input. A line it cannot read is logged and skipped. JSON values are plain Java values:
 * an object is a {@code Map<String, Object>} (keys in their order), an array a
 * {@code List<Object>}, a number a {@code Long} or a {@code Double}. The messages and their
 * fields: docs/protocol.md, section 15 (The stdio protocol).
 */
public final class ArenaStdio {
    /** A bot's decision: the action to answer for a turn (a map of "kind", "cards", ...). */
    public interface Decide {
        Map<String, Object> decide(Turn turn);
    }

    /** What decide is given: the decision asked for now and what the seat was told. */
    public static final class Turn {
        /** This bot's seat, 0-3 (from the welcome). */
        public int seat = -1;
        /** "two-deck-80", "two-deck-fry", "single-deck", "three-deck", ... */
        public String variant = "";
        /** The decision: "DECISION_KIND_LEAD", "DECISION_KIND_FOLLOW", ... */
        public String kind = "";
        /** The seat's view (docs/protocol.md, section 6): "hand", "trump", "trick", ... */
        public Map<String, Object> observation = new LinkedHashMap<>();
        /** hint.actions: never empty, every one legal; answer one as it is, or your own. */
        public List<Map<String, Object>> actions = new ArrayList<>();
        /** hint.complete: actions holds every legal action. */
        public boolean complete;
        /** hint.note: what is allowed when actions is only a sample. */
        public String note = "";
        /** This decision's allowance and the seat's remaining time bank, in ms. */
        public long timeLeftMs;
        public long bankLeftMs;
        /** Every event since the previous turn, those of notices included ("kind", "seat",
         * "cards", and "json": all its fields as JSON text). */
        public List<Map<String, Object>> events = new ArrayList<>();
    }

    private ArenaStdio() {
    }

    /** An action of {@code kind} ("ACTION_KIND_PLAY", ...) with {@code cards}. */
    public static Map<String, Object> action(String kind, String... cards) {
        Map<String, Object> action = new LinkedHashMap<>();
        action.put("kind", kind);
        action.put("cards", new ArrayList<Object>(List.of(cards)));
        return action;
    }

    /** Answers the referee's requests with {@code decide} until the match ends. */
    public static void play(Decide decide) throws IOException {
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false,
                                          StandardCharsets.UTF_8);
        Turn turn = new Turn();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> m;
            try {
                m = map(parse(line));
            } catch (IllegalArgumentException e) {
                log("WARNING unreadable line from the referee (" + line.length()
                    + " characters): " + e.getMessage());
                continue;
            }
            switch (String.valueOf(m.get("type"))) {
                case "welcome":
                    turn.seat = (int) number(m.get("seat"), -1);
                    turn.variant = String.valueOf(m.get("variant"));
                    log("INFO welcome: seat " + turn.seat + ", variant " + turn.variant);
                    break;
                case "notice":
                    turn.events.addAll(maps(m.get("events")));
                    break;
                case "request": {
                    Map<String, Object> hint = map(m.get("hint"));
                    turn.kind = String.valueOf(m.get("kind"));
                    turn.observation = map(m.get("observation"));
                    turn.actions = maps(hint.get("actions"));
                    turn.complete = Boolean.TRUE.equals(hint.get("complete"));
                    turn.note = String.valueOf(hint.getOrDefault("note", ""));
                    turn.timeLeftMs = number(m.get("time_left_ms"), 0);
                    turn.bankLeftMs = number(m.get("bank_left_ms"), 0);
                    turn.events.addAll(maps(m.get("events")));
                    Map<String, Object> answer = new LinkedHashMap<>();
                    answer.put("request_id", m.get("request_id"));
                    answer.put("action", decided(decide, turn));
                    turn.events = new ArrayList<>();
                    out.print(write(answer) + "\n");
                    out.flush();
                    if (out.checkError()) {
                        log("WARNING cannot write the answer: the referee is gone");
                        return;
                    }
                    break;
                }
                case "rejection": {
                    Map<String, Object> played = map(m.get("default_action"));
                    log("WARNING rejected: request " + m.get("request_id") + ": "
                        + m.get("reason") + " (strikes " + m.get("strikes")
                        + ", the referee played " + played.get("kind") + " "
                        + played.get("cards") + ")");
                    break;
                }
                case "match_end":
                    log("INFO match end: " + m.get("reason"));
                    return;
                default:
                    break;  // a message type added later
            }
        }
        log("INFO end of input");
    }

    /** decide's action; the first listed one, should decide throw. */
    private static Map<String, Object> decided(Decide decide, Turn turn) {
        try {
            Map<String, Object> action = decide.decide(turn);
            if (action != null) {
                return action;
            }
            log("WARNING decide answered null; answering the first listed action");
        } catch (RuntimeException e) {
            log("WARNING decide failed: " + e + "; answering the first listed action");
        }
        return turn.actions.isEmpty() ? action("ACTION_KIND_PASS") : turn.actions.get(0);
    }

    private static void log(String line) {
        System.err.println("[arena_stdio] " + line);
    }

    /** A whole number sent as a number or as a string of digits (a 64-bit integer). */
    private static long number(Object value, long otherwise) {
        if (value instanceof Number) {
            return ((Number) value).longValue();
        }
        try {
            return Long.parseLong(String.valueOf(value));
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }

    /** {@code value} as a JSON object (an empty one if it is not). */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> map(Object value) {
        return value instanceof Map ? (Map<String, Object>) value : new LinkedHashMap<>();
    }

    /** {@code value} as a JSON array (an empty one if it is not). */
    @SuppressWarnings("unchecked")
    public static List<Object> list(Object value) {
        return value instanceof List ? (List<Object>) value : new ArrayList<>();
    }

    private static List<Map<String, Object>> maps(Object value) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object item : list(value)) {
            out.add(map(item));
        }
        return out;
    }

    // -- JSON ----------------------------------------------------------------------------------

    /** The value of the JSON text {@code text}; an {@code IllegalArgumentException} if it is
     * not JSON. */
    public static Object parse(String text) {
        Parser p = new Parser(text);
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

    private static final class Parser {
        private final String text;
        private int at;

        Parser(String text) {
            this.text = text;
        }

        Object value() {
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
                if (next() != ':') {
                    throw error("':' expected");
                }
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
                if (c < 0x20) {
                    throw error("a control character in a string");
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
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
                        try {  // (a surrogate pair is two escapes: two chars, as Java keeps it)
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("a bad \\u escape");
                        }
                        at += 4;
                        break;
                    default:
                        throw error("a bad escape '\\" + e + "'");
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
                if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                    whole = false;
                } else if (c < '0' || c > '9') {
                    break;
                }
                at++;
            }
            String digits = text.substring(start, at);
            try {
                return whole ? (Object) Long.parseLong(digits)
                             : (Object) Double.parseDouble(digits);
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

        void space() {
            while (at < text.length() && " \t\n\r".indexOf(text.charAt(at)) >= 0) {
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

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("JSON: " + what + " at character " + at);
        }
    }

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
            String comma = "";
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                out.append(comma);
                comma = ",";
                quote(String.valueOf(e.getKey()), out);
                out.append(':');
                write(e.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            String comma = "";
            for (Object v : (List<?>) value) {
                out.append(comma);
                comma = ",";
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
