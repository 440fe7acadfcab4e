//! rust-sample: a Shengji Arena bot in Rust speaking the stdio protocol (docs/protocol.md,
//! sample_bots/stdio/README.md) with no crates. The referee writes each message as one JSON
//! line on standard input; the bot answers each request with one JSON line on standard output,
//! an action copied from the request's legal hint, and logs to standard error, which is the
//! seat's log.

mod json;

use json::Value;
use std::io::{self, BufRead, Read, Write};
use std::time::{Duration, Instant};

/// A small xorshift generator for the tie-breaks, seeded from /dev/urandom (or the clock).
struct Random(u64);

impl Random {
    fn seeded() -> Random {
        let mut seed = [0u8; 8];
        let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut seed));
        let mut s = u64::from_le_bytes(seed);
        if read.is_err() || s == 0 {
            s = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1;
        }
        Random(s)
    }

    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }
}

struct Bot {
    random: Random,
    decisions: u32,
    total: Duration,
    slowest: Duration,
}

fn main() {
    let mut bot = Bot { random: Random::seeded(), decisions: 0, total: Duration::ZERO,
                        slowest: Duration::ZERO };
    eprintln!("[rust-sample] INFO seat {} of match {}, session {:016x}",
              std::env::var("ARENA_SEAT").unwrap_or_default(),
              std::env::var("ARENA_MATCH_ID").unwrap_or_default(), bot.random.0);
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("[rust-sample] WARNING reading: {}", e);
                break;
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        let message = match json::parse(line.trim_end()) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("[rust-sample] WARNING unreadable line: {}", e);
                continue;
            }
        };
        match message.get("type").as_str().unwrap_or("") {
            "request" => {
                let start = Instant::now();
                let answer = Value::Object(vec![
                    ("request_id".to_string(), message.get("request_id").clone()),
                    ("action".to_string(), bot.choose(&message)),
                ]);
                if writeln!(out, "{}", answer).and_then(|_| out.flush()).is_err() {
                    break; // the referee is gone
                }
                bot.count(start.elapsed());
            }
            "welcome" => eprintln!("[rust-sample] INFO welcome: seat {}, variant {}",
                                   message.get("seat"), message.get("variant")),
            "rejection" => eprintln!("[rust-sample] WARNING rejected: {}", message.get("reason")),
            "match_end" => {
                eprintln!("[rust-sample] INFO match end: {}", message.get("reason"));
                break;
            }
            _ => {}
        }
    }
    let mean = if bot.decisions == 0 { 0.0 } else {
        bot.total.as_secs_f64() * 1000.0 / bot.decisions as f64
    };
    eprintln!("[rust-sample] INFO done: {} decisions, mean {:.3} ms, max {:.3} ms, peak RSS {}",
              bot.decisions, mean, bot.slowest.as_secs_f64() * 1000.0, peak_rss());
}

impl Bot {
    fn count(&mut self, elapsed: Duration) {
        self.decisions += 1;
        self.total += elapsed;
        self.slowest = self.slowest.max(elapsed);
    }

    /// The action for a request: always one of `hint.actions` (never empty, every one legal),
    /// copied as it came.
    fn choose(&mut self, request: &Value) -> Value {
        let actions = request.get("hint").get("actions").items();
        if actions.is_empty() {
            // (the referee always lists one; a pass, should it not)
            return Value::Object(vec![("kind".into(), Value::Str("ACTION_KIND_PASS".into()))]);
        }
        let kind = request.get("kind").as_str().unwrap_or("");
        let observation = request.get("observation");
        match kind.trim_start_matches("DECISION_KIND_") {
            "LEAD" => self.fewest(actions.iter().collect(), true),
            "FOLLOW" => self.fewest(actions.iter().collect(), false),
            "DECLARE" => {
                // pass, but at the final chances when nobody has declared: then declare (four
                // bots that always pass would never fix a trump)
                let nobody = observation.get("declarations").items().is_empty();
                if observation.get("phase").as_str() == Some("declare_round") && nobody {
                    let declares: Vec<&Value> = actions.iter()
                        .filter(|a| a.get("kind").as_str() == Some("ACTION_KIND_DECLARE"))
                        .collect();
                    if !declares.is_empty() {
                        return self.fewest(declares, true);
                    }
                }
                pass_or_first(actions)
            }
            // optional: pass when allowed
            "REDEAL" | "UPRISING" | "HANDOVER" | "TRANSFER" | "DUN_REVEAL" | "JOKER_BURY" => {
                pass_or_first(actions)
            }
            _ => actions[0].clone(), // BURY, RETURN and any kind added later: the first listed
        }
    }

    /// The actions with the fewest cards, then the highest (or lowest) ranks; ties at random.
    fn fewest(&mut self, actions: Vec<&Value>, highest: bool) -> Value {
        let score = |a: &Value| {
            let cards = a.get("cards").items();
            let sum: i64 = cards.iter().map(|c| rank(c.as_str().unwrap_or(""))).sum();
            -1000 * cards.len() as i64 + if highest { sum } else { -sum }
        };
        let top = actions.iter().map(|a| score(a)).max().unwrap_or(0);
        let best: Vec<&&Value> = actions.iter().filter(|a| score(a) == top).collect();
        best[self.random.below(best.len())].clone().clone()
    }
}

fn pass_or_first(actions: &[Value]) -> Value {
    actions.iter()
        .find(|a| a.get("kind").as_str() == Some("ACTION_KIND_PASS"))
        .unwrap_or(&actions[0])
        .clone()
}

/// A card's rank: 2 .. A as 0 .. 12, the little joker 13, the big joker 14.
fn rank(card: &str) -> i64 {
    match card {
        "LJ" => return 13,
        "BJ" => return 14,
        _ => {}
    }
    if card.len() < 2 {
        return 0;
    }
    match &card[..card.len() - 1] {
        "J" => 9,
        "Q" => 10,
        "K" => 11,
        "A" => 12,
        r => r.parse::<i64>().map(|n| n - 2).unwrap_or(0),
    }
}

/// The process's peak resident memory (VmHWM in /proc/self/status), or "?".
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status").ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:"))
                       .map(|l| l[6..].trim().to_string()))
        .unwrap_or_else(|| "?".to_string())
}
