import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * java-sample: a Shengji Arena bot in plain Java 17. ArenaStdio.java speaks the stdio protocol
 * (docs/protocol.md, section 15) and calls {@link #choose} once per decision; choose answers
 * with one of the request's listed legal actions. Logs go to standard error
 * (java.util.logging's console handler), the seat's log.
 */
public final class Bot {
    private static final Logger LOG;

    static {
        // one line per record, to standard error (the logging configuration is the JDK's own)
        System.setProperty("java.util.logging.SimpleFormatter.format",
                           "[java-sample] %4$s %5$s%6$s%n");
        LOG = Logger.getLogger("java-sample");
    }

    private final Random random;
    private int decisions;
    private long nanos;
    private long slowest;

    private Bot(Random random) {
        this.random = random;
    }

    public static void main(String[] args) throws IOException {
        // a session id for the log (UUID.randomUUID draws from SecureRandom) and a seed for the
        // tie-breaks: two sandboxed copies of this bot do not play alike
        String session = UUID.randomUUID().toString();
        Bot bot = new Bot(new Random(new SecureRandom().nextLong()));
        LOG.info("seat " + System.getenv("ARENA_SEAT") + " of match "
                 + System.getenv("ARENA_MATCH_ID") + ", session " + session + ", max heap "
                 + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MiB");
        ArenaStdio.play(turn -> {
            long start = System.nanoTime();
            Map<String, Object> action = bot.choose(turn);
            bot.count(System.nanoTime() - start);
            return action;
        });
        LOG.info(String.format("done: %d decisions, mean %.3f ms, max %.3f ms, peak RSS %s",
                               bot.decisions,
                               bot.decisions == 0 ? 0.0 : bot.nanos / 1e6 / bot.decisions,
                               bot.slowest / 1e6, peakRss()));
    }

    /** The process's peak resident memory (VmHWM in /proc/self/status), or "?" where unknown. */
    private static String peakRss() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return line.substring(6).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or no /proc: say so
        }
        return "?";
    }

    private void count(long elapsed) {
        decisions++;
        nanos += elapsed;
        slowest = Math.max(slowest, elapsed);
    }

    /**
     * The action for a turn: always one of the listed actions (never empty, every one legal),
     * copied as it came.
     */
    private Map<String, Object> choose(ArenaStdio.Turn turn) {
        List<Map<String, Object>> actions = turn.actions;
        if (actions.isEmpty()) {  // (the referee always lists one; a pass, should it not)
            return ArenaStdio.action("ACTION_KIND_PASS");
        }
        switch (turn.kind.replace("DECISION_KIND_", "")) {
            case "LEAD":    // the fewest cards, and among those the highest
                return fewest(actions, true);
            case "FOLLOW":  // the fewest cards, and among those the lowest
                return fewest(actions, false);
            case "DECLARE": {
                // pass, but at the final chances when nobody has declared: then declare (four
                // bots that always pass would never fix a trump)
                boolean nobody = ArenaStdio.list(turn.observation.get("declarations")).isEmpty();
                if ("declare_round".equals(turn.observation.get("phase")) && nobody) {
                    List<Map<String, Object>> declares = new ArrayList<>();
                    for (Map<String, Object> a : actions) {
                        if ("ACTION_KIND_DECLARE".equals(a.get("kind"))) {
                            declares.add(a);
                        }
                    }
                    if (!declares.isEmpty()) {
                        return fewest(declares, true);
                    }
                }
                return passOrFirst(actions);
            }
            case "REDEAL": case "UPRISING": case "HANDOVER": case "TRANSFER":
            case "DUN_REVEAL": case "JOKER_BURY":  // optional: pass when allowed
                return passOrFirst(actions);
            default:        // BURY, RETURN and any kind added later: the first listed
                return actions.get(0);
        }
    }

    private static Map<String, Object> passOrFirst(List<Map<String, Object>> actions) {
        for (Map<String, Object> a : actions) {
            if ("ACTION_KIND_PASS".equals(a.get("kind"))) {
                return a;
            }
        }
        return actions.get(0);
    }

    /** The actions with the fewest cards, then the highest (or lowest) ranks; ties at random. */
    private Map<String, Object> fewest(List<Map<String, Object>> actions, boolean highest) {
        List<Map<String, Object>> best = new ArrayList<>();
        long bestScore = Long.MIN_VALUE;
        for (Map<String, Object> a : actions) {
            List<Object> cards = ArenaStdio.list(a.get("cards"));
            int sum = 0;
            for (Object c : cards) {
                sum += rank(String.valueOf(c));
            }
            long score = -1000L * cards.size() + (highest ? sum : -sum);
            if (score > bestScore) {
                best.clear();
                bestScore = score;
            }
            if (score == bestScore) {
                best.add(a);
            }
        }
        return best.get(random.nextInt(best.size()));
    }

    /** A card's rank: 2 .. A as 0 .. 12, the little joker 13, the big joker 14. */
    static int rank(String card) {
        if (card.equals("LJ")) {
            return 13;
        }
        if (card.equals("BJ")) {
            return 14;
        }
        String r = card.substring(0, card.length() - 1);
        switch (r) {
            case "J": return 9;
            case "Q": return 10;
            case "K": return 11;
            case "A": return 12;
            default:
                try {
                    return Integer.parseInt(r) - 2;
                } catch (NumberFormatException e) {
                    return 0;
                }
        }
    }
}
