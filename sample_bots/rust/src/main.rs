//! rust-sample: a Shengji Arena bot in Rust with no crates. `arena_stdio.rs` speaks the stdio
//! protocol (docs/protocol.md, section 15) and calls `Bot::choose` once per decision; `choose`
//! answers with one of the request's listed legal actions. Logs go to standard error, the
//! seat's log.

mod arena_stdio;

use arena_stdio::{Turn, Value};
use std::io::Read;
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
    arena_stdio::play(|turn| {
        let start = Instant::now();
        let chosen = bot.choose(turn);
        bot.count(start.elapsed());
        chosen
    });
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

    /// The action for a turn: always one of the listed actions (never empty, every one
    /// legal), copied as it came.
    fn choose(&mut self, turn: &Turn) -> Value {
        let actions = &turn.actions;
        if actions.is_empty() {
            // (the referee always lists one; a pass, should it not)
            return arena_stdio::action("ACTION_KIND_PASS", &[]);
        }
        match turn.kind.trim_start_matches("DECISION_KIND_") {
            "LEAD" => self.fewest(actions.iter().collect(), true),
            "FOLLOW" => self.fewest(actions.iter().collect(), false),
            "DECLARE" => {
                // pass, but at the final chances when nobody has declared: then declare (four
                // bots that always pass would never fix a trump)
                let observation = &turn.observation;
                let nobody = observation.get("declarations").items().is_empty();
                if observation.get("phase").str() == "declare_round" && nobody {
                    let declares: Vec<&Value> = actions.iter()
                        .filter(|a| a.get("kind").str() == "ACTION_KIND_DECLARE")
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
        let best: Vec<&Value> = actions.into_iter().filter(|a| score(a) == top).collect();
        best[self.random.below(best.len())].clone()
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
