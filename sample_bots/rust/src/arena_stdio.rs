//! arena_stdio.rs: the stdio protocol of Shengji Arena for a Rust bot, with no crates (a small
//! JSON reader and writer of its own).
//!
//! Copy this file into your `src/`, declare it in `main.rs` and call `play` with your decide
//! function:
//!
//! ```ignore
//! mod arena_stdio;
//! fn main() {
//!     arena_stdio::play(|turn| turn.actions[0].clone()); // the first listed action is legal
//! }
//! ```
//!
//! `play` reads the referee's JSON lines on standard input, keeps what the seat was told (its
//! seat, the variant, the latest observation and hint, the events since its previous turn),
//! calls decide once per request and writes the answer line, `{"request_id": ..., "action":
//! {...}}`, flushed at once. It logs to standard error (the seat's log; standard output carries
//! answers only) and returns at `match_end` or at the end of input. A line it cannot read is
//! logged and skipped. The messages and their fields: docs/protocol.md, section 15 (The stdio
//! protocol).
#![allow(dead_code)] // (a bot uses only some of it)

use std::fmt;
use std::io::{self, BufRead, Write};

/// What `decide` is given: the decision asked for now and what the seat was told.
#[derive(Debug)]
pub struct Turn {
    /// This bot's seat, 0-3 (from the welcome).
    pub seat: i64,
    /// "two-deck-80", "two-deck-fry", "single-deck", "three-deck", ...
    pub variant: String,
    /// The decision: "DECISION_KIND_LEAD", "DECISION_KIND_FOLLOW", ...
    pub kind: String,
    /// The seat's view (docs/protocol.md, section 6): `turn.observation.get("hand")`, ...
    pub observation: Value,
    /// `hint.actions`: never empty, every one legal; answer one of them as it is, or your own.
    pub actions: Vec<Value>,
    /// `hint.complete`: `actions` holds every legal action.
    pub complete: bool,
    /// `hint.note`: what is allowed when `actions` is only a sample.
    pub note: String,
    /// This decision's allowance and the seat's remaining time bank, in ms.
    pub time_left_ms: i64,
    pub bank_left_ms: i64,
    /// Every event since the previous turn, those of notices included (`kind`, `seat`,
    /// `cards`, and `json`: all its fields as JSON text).
    pub events: Vec<Value>,
}

/// An action of `kind` ("ACTION_KIND_PLAY", ...) with `cards` (none for a pass).
pub fn action(kind: &str, cards: &[&str]) -> Value {
    let cards = cards.iter().map(|c| Value::Str(c.to_string())).collect();
    Value::Object(vec![("kind".into(), Value::Str(kind.into())),
                       ("cards".into(), Value::Array(cards))])
}

/// Answers the referee's requests with `decide` until the match ends.
pub fn play<F: FnMut(&Turn) -> Value>(mut decide: F) {
    let mut turn = Turn { seat: -1, variant: String::new(), kind: String::new(),
                          observation: Value::Null, actions: Vec::new(), complete: false,
                          note: String::new(), time_left_ms: 0, bank_left_ms: 0,
                          events: Vec::new() };
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => {
                eprintln!("[arena_stdio] INFO end of input");
                return;
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("[arena_stdio] WARNING reading standard input: {}", e);
                return;
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        let m = match parse(line.trim_end()) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("[arena_stdio] WARNING unreadable line from the referee ({} bytes): {}",
                          line.len(), e);
                continue;
            }
        };
        match m.get("type").str() {
            "welcome" => {
                turn.seat = m.get("seat").as_i64().unwrap_or(-1);
                turn.variant = m.get("variant").str().to_string();
                eprintln!("[arena_stdio] INFO welcome: seat {}, variant {}", turn.seat,
                          turn.variant);
            }
            "notice" => turn.events.extend(m.get("events").items().iter().cloned()),
            "request" => {
                turn.kind = m.get("kind").str().to_string();
                turn.observation = m.get("observation").clone();
                let hint = m.get("hint");
                turn.actions = hint.get("actions").items().to_vec();
                turn.complete = hint.get("complete") == &Value::Bool(true);
                turn.note = hint.get("note").str().to_string();
                turn.time_left_ms = m.get("time_left_ms").as_i64().unwrap_or(0);
                turn.bank_left_ms = m.get("bank_left_ms").as_i64().unwrap_or(0);
                turn.events.extend(m.get("events").items().iter().cloned());
                let chosen = decided(&mut decide, &turn);
                turn.events.clear();
                let answer = Value::Object(vec![("request_id".into(), m.get("request_id").clone()),
                                                ("action".into(), chosen)]);
                if let Err(e) = writeln!(out, "{}", answer).and_then(|_| out.flush()) {
                    eprintln!("[arena_stdio] WARNING writing the answer: {}", e);
                    return; // the referee is gone
                }
            }
            "rejection" => {
                let played = m.get("default_action");
                eprintln!("[arena_stdio] WARNING rejected: request {}: {} (strikes {}, the \
                           referee played {} {})", m.get("request_id").str(),
                          m.get("reason").str(), m.get("strikes"), played.get("kind").str(),
                          played.get("cards"));
            }
            "match_end" => {
                eprintln!("[arena_stdio] INFO match end: {}", m.get("reason").str());
                return;
            }
            _ => {}
        }
    }
}

/// `decide`'s action; the first listed one, should `decide` panic.
fn decided<F: FnMut(&Turn) -> Value>(decide: &mut F, turn: &Turn) -> Value {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(turn))) {
        Ok(chosen) => chosen,
        Err(_) => {
            eprintln!("[arena_stdio] WARNING decide panicked; answering the first listed action");
            turn.actions.first().cloned().unwrap_or_else(|| action("ACTION_KIND_PASS", &[]))
        }
    }
}

// -- JSON ---------------------------------------------------------------------------------------

/// A JSON value. An object keeps its keys in their order; a number is kept as the text it
/// came as (so it is written back unchanged). `Display` writes it as one line of JSON.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(String),
    Str(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

static NULL: Value = Value::Null;

impl Value {
    /// The member `key` of an object (`Null` when absent or not an object).
    pub fn get(&self, key: &str) -> &Value {
        if let Value::Object(members) = self {
            for (k, v) in members {
                if k == key {
                    return v;
                }
            }
        }
        &NULL
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A string's text, "" for anything else.
    pub fn str(&self) -> &str {
        self.as_str().unwrap_or("")
    }

    /// A whole number, written as a number or as a string of digits (a 64-bit integer).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) | Value::Str(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// An array's items (none when not an array).
    pub fn items(&self) -> &[Value] {
        match self {
            Value::Array(items) => items,
            _ => &[],
        }
    }
}

/// The value of the JSON text `text`, or why it is not JSON.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser { s: text.as_bytes(), at: 0 };
    p.space();
    let v = p.value(0)?;
    p.space();
    if p.at != p.s.len() {
        return Err(p.error("text after the value"));
    }
    Ok(v)
}

const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, what: &str) -> String {
        format!("{} at byte {}", what, self.at)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.peek() {
            None => Err(self.error("a value expected")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            Some(c) => Err(self.error(&format!("unexpected character {:?}", c as char))),
        }
    }

    fn word(&mut self, word: &str, v: Value) -> Result<Value, String> {
        if !self.s[self.at..].starts_with(word.as_bytes()) {
            return Err(self.error("a value expected"));
        }
        self.at += word.len();
        Ok(v)
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
        if text.parse::<f64>().is_err() {
            return Err(self.error("a number expected"));
        }
        Ok(Value::Number(text.to_string()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.s.get(self.at..self.at + 4).ok_or_else(|| self.error("\\u escape"))?;
        let digits = std::str::from_utf8(digits).map_err(|_| self.error("\\u escape"))?;
        let n = u32::from_str_radix(digits, 16).map_err(|_| self.error("\\u escape"))?;
        self.at += 4;
        Ok(n)
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek().ok_or_else(|| self.error("an unterminated string"))?;
            self.at += 1;
            if c == b'"' {
                break;
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let e = self.peek().ok_or_else(|| self.error("an escape"))?;
            self.at += 1;
            let ch = match e {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let mut n = self.hex4()?;
                    if (0xD800..0xDC00).contains(&n) && self.s[self.at..].starts_with(b"\\u") {
                        self.at += 2; // a surrogate pair
                        let low = self.hex4()?;
                        n = 0x10000 + ((n - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                    }
                    char::from_u32(n).unwrap_or('\u{FFFD}')
                }
                _ => return Err(self.error("an unknown escape")),
            };
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
        String::from_utf8(out).map_err(|_| self.error("a string that is not UTF-8"))
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut items = Vec::new();
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.space();
            items.push(self.value(depth + 1)?);
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("',' or ']' expected")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut members = Vec::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.error("a key expected"));
            }
            let key = self.string()?;
            self.space();
            if self.peek() != Some(b':') {
                return Err(self.error("':' expected"));
            }
            self.at += 1;
            self.space();
            members.push((key, self.value(depth + 1)?));
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("',' or '}' expected")),
            }
        }
    }
}

fn write_str(s: &str, f: &mut fmt::Formatter) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{}", c)?,
        }
    }
    f.write_str("\"")
}

impl fmt::Display for Value {
    /// One line of JSON.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Value::Number(n) => f.write_str(n),
            Value::Str(s) => write_str(s, f),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", v)?;
                }
                f.write_str("]")
            }
            Value::Object(members) => {
                f.write_str("{")?;
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_str(k, f)?;
                    write!(f, ":{}", v)?;
                }
                f.write_str("}")
            }
        }
    }
}
