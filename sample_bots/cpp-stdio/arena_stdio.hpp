// arena_stdio.hpp: the stdio protocol of Shengji Arena for a C++ bot. Header-only, C++17, the
// standard library only, with a small JSON reader and writer of its own.
//
// Copy this file next to your bot's source, include it and call arena_stdio::play with your
// decide function:
//
//   #include "arena_stdio.hpp"
//   int main() {
//     arena_stdio::play([](const arena_stdio::Turn& turn) {
//       return turn.actions.at(0);  // the first listed action is legal
//     });
//   }
//
// play reads the referee's JSON lines on standard input, keeps what the seat was told (its
// seat, the variant, the latest observation and hint, the events since its previous turn),
// calls decide once per request and writes the answer line, {"request_id": ..., "action":
// {...}}, flushed at once. It logs to standard error (the seat's log; standard output carries
// answers only) and returns at match_end or at the end of input. A line it cannot read is
// logged and skipped. The messages and their fields: docs/protocol.md, section 15 (The stdio
// protocol).
#ifndef ARENA_STDIO_HPP
#define ARENA_STDIO_HPP

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace arena_stdio {

// A JSON value. An object keeps its keys in their order; a number keeps the text it came as
// (so it is written back unchanged).
struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  std::string text;                 // a string's value, or a number as written
  std::vector<Json> items;          // an array's items
  std::vector<std::string> keys;    // an object's keys, in order ...
  std::vector<Json> values;         // ... and their values

  static Json string(std::string s) {
    Json j;
    j.type = Type::String;
    j.text = std::move(s);
    return j;
  }
  static Json array(std::vector<Json> items = {}) {
    Json j;
    j.type = Type::Array;
    j.items = std::move(items);
    return j;
  }
  static Json object() {
    Json j;
    j.type = Type::Object;
    return j;
  }

  // The member `key` of an object (null when absent or not an object).
  const Json& operator[](const std::string& key) const {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return values[i];
    }
    return null_value();
  }
  // Sets the member `key` of an object.
  void set(const std::string& key, Json value) {
    type = Type::Object;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) {
        values[i] = std::move(value);
        return;
      }
    }
    keys.push_back(key);
    values.push_back(std::move(value));
  }
  // A string's text ("" for anything else).
  std::string str() const { return type == Type::String ? text : std::string(); }
  // A whole number, written as a number or as a string of digits (a 64-bit integer).
  std::int64_t integer(std::int64_t otherwise = 0) const {
    if (type != Type::Number && type != Type::String) return otherwise;
    try {
      std::size_t used = 0;
      std::int64_t n = std::stoll(text, &used);
      return used == text.size() ? n : otherwise;
    } catch (const std::exception&) {
      return otherwise;
    }
  }
  bool is_true() const { return type == Type::Bool && boolean; }

  // One line of JSON.
  std::string dump() const {
    std::string out;
    dump_to(out);
    return out;
  }

  // The value of the JSON text `text`; std::runtime_error if it is not JSON.
  static Json parse(const std::string& text) {
    Parser p{text, 0};
    p.space();
    Json value = p.value(0);
    p.space();
    if (p.at != text.size()) p.fail("text after the value");
    return value;
  }

 private:
  static const Json& null_value() {
    static const Json null;
    return null;
  }

  static void quote(const std::string& s, std::string& out) {
    out += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
    }
    out += '"';
  }

  void dump_to(std::string& out) const {
    switch (type) {
      case Type::Null: out += "null"; break;
      case Type::Bool: out += boolean ? "true" : "false"; break;
      case Type::Number: out += text; break;
      case Type::String: quote(text, out); break;
      case Type::Array:
        out += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (i > 0) out += ',';
          items[i].dump_to(out);
        }
        out += ']';
        break;
      case Type::Object:
        out += '{';
        for (std::size_t i = 0; i < keys.size(); ++i) {
          if (i > 0) out += ',';
          quote(keys[i], out);
          out += ':';
          values[i].dump_to(out);
        }
        out += '}';
        break;
    }
  }

  struct Parser {
    const std::string& s;
    std::size_t at;

    [[noreturn]] void fail(const std::string& what) const {
      throw std::runtime_error(what + " at byte " + std::to_string(at));
    }
    char peek() const { return at < s.size() ? s[at] : '\0'; }
    void space() {
      while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\r' || s[at] == '\n'))
        ++at;
    }
    void expect(char c) {
      if (peek() != c) fail(std::string("'") + c + "' expected");
      ++at;
    }

    Json value(int depth) {
      if (depth > 64) fail("nested too deeply");
      char c = peek();
      if (c == '{') return object(depth);
      if (c == '[') return array(depth);
      if (c == '"') return Json::string(string());
      if (c == 't') return word("true", true);
      if (c == 'f') return word("false", false);
      if (c == 'n') {
        if (s.compare(at, 4, "null") != 0) fail("a value expected");
        at += 4;
        return Json();
      }
      if (c == '-' || (c >= '0' && c <= '9')) return number();
      fail("a value expected");
    }

    Json word(const std::string& expected, bool b) {
      if (s.compare(at, expected.size(), expected) != 0) fail("a value expected");
      at += expected.size();
      Json j;
      j.type = Type::Bool;
      j.boolean = b;
      return j;
    }

    Json number() {
      std::size_t start = at;
      while (at < s.size() && std::string("+-.eE0123456789").find(s[at]) != std::string::npos)
        ++at;
      Json j;
      j.type = Type::Number;
      j.text = s.substr(start, at - start);
      try {
        std::stod(j.text);
      } catch (const std::exception&) {
        fail("a number expected");
      }
      return j;
    }

    unsigned hex4() {
      if (at + 4 > s.size()) fail("a \\u escape cut short");
      unsigned n = 0;
      for (int i = 0; i < 4; ++i) {
        char c = s[at++];
        n <<= 4;
        if (c >= '0' && c <= '9') n |= c - '0';
        else if (c >= 'a' && c <= 'f') n |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') n |= c - 'A' + 10;
        else fail("a bad \\u escape");
      }
      return n;
    }

    static void utf8(unsigned n, std::string& out) {
      if (n < 0x80) {
        out += static_cast<char>(n);
      } else if (n < 0x800) {
        out += static_cast<char>(0xC0 | (n >> 6));
        out += static_cast<char>(0x80 | (n & 0x3F));
      } else if (n < 0x10000) {
        out += static_cast<char>(0xE0 | (n >> 12));
        out += static_cast<char>(0x80 | ((n >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (n & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (n >> 18));
        out += static_cast<char>(0x80 | ((n >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((n >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (n & 0x3F));
      }
    }

    std::string string() {
      ++at;  // the opening quote
      std::string out;
      while (true) {
        if (at >= s.size()) fail("an unterminated string");
        char c = s[at++];
        if (c == '"') return out;
        if (c != '\\') {
          out += c;
          continue;
        }
        if (at >= s.size()) fail("an escape cut short");
        char e = s[at++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            unsigned n = hex4();
            if (n >= 0xD800 && n < 0xDC00 && s.compare(at, 2, "\\u") == 0) {
              at += 2;  // a surrogate pair
              n = 0x10000 + ((n - 0xD800) << 10) + ((hex4() - 0xDC00) & 0x3FF);
            }
            utf8(n, out);
            break;
          }
          default: fail("an unknown escape");
        }
      }
    }

    Json array(int depth) {
      ++at;
      Json j = Json::array();
      space();
      if (peek() == ']') {
        ++at;
        return j;
      }
      while (true) {
        space();
        j.items.push_back(value(depth + 1));
        space();
        if (peek() == ']') {
          ++at;
          return j;
        }
        expect(',');
      }
    }

    Json object(int depth) {
      ++at;
      Json j = Json::object();
      space();
      if (peek() == '}') {
        ++at;
        return j;
      }
      while (true) {
        space();
        if (peek() != '"') fail("a key expected");
        j.keys.push_back(string());
        space();
        expect(':');
        space();
        j.values.push_back(value(depth + 1));
        space();
        if (peek() == '}') {
          ++at;
          return j;
        }
        expect(',');
      }
    }
  };
};

// An action of `kind` ("ACTION_KIND_PLAY", ...) with `cards` (none for a pass).
inline Json action(const std::string& kind, const std::vector<std::string>& cards = {}) {
  Json a = Json::object();
  a.set("kind", Json::string(kind));
  Json list = Json::array();
  for (const std::string& c : cards) list.items.push_back(Json::string(c));
  a.set("cards", list);
  return a;
}

// What decide is given: the decision asked for now and what the seat was told.
struct Turn {
  int seat = -1;            // this bot's seat, 0-3 (from the welcome)
  std::string variant;      // "two-deck-80", "two-deck-fry", "single-deck", "three-deck", ...
  std::string kind;         // the decision: "DECISION_KIND_LEAD", "DECISION_KIND_FOLLOW", ...
  Json observation;         // the seat's view (docs/protocol.md, section 6): ["hand"], ...
  std::vector<Json> actions;  // hint.actions: never empty, every one legal
  bool complete = false;    // hint.complete: actions holds every legal action
  std::string note;         // hint.note: what is allowed when actions is only a sample
  std::int64_t time_left_ms = 0;  // this decision's allowance
  std::int64_t bank_left_ms = 0;  // the seat's remaining time bank
  std::vector<Json> events;  // every event since the previous turn, those of notices included
};

inline void log(const std::string& line) { std::cerr << "[arena_stdio] " << line << std::endl; }

// decide's action; the first listed one, should decide throw.
inline Json decided(const std::function<Json(const Turn&)>& decide, const Turn& turn) {
  try {
    return decide(turn);
  } catch (const std::exception& e) {
    log(std::string("WARNING decide failed: ") + e.what() +
        "; answering the first listed action");
  }
  return turn.actions.empty() ? action("ACTION_KIND_PASS") : turn.actions[0];
}

// Answers the referee's requests with decide until the match ends.
inline void play(const std::function<Json(const Turn&)>& decide) {
  Turn turn;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json m;
    try {
      m = Json::parse(line);
    } catch (const std::exception& e) {
      log("WARNING unreadable line from the referee (" + std::to_string(line.size()) +
          " bytes): " + e.what());
      continue;
    }
    const std::string type = m["type"].str();
    if (type == "welcome") {
      turn.seat = static_cast<int>(m["seat"].integer(-1));
      turn.variant = m["variant"].str();
      log("INFO welcome: seat " + std::to_string(turn.seat) + ", variant " + turn.variant);
    } else if (type == "notice") {
      const auto& events = m["events"].items;
      turn.events.insert(turn.events.end(), events.begin(), events.end());
    } else if (type == "request") {
      const Json& hint = m["hint"];
      turn.kind = m["kind"].str();
      turn.observation = m["observation"];
      turn.actions = hint["actions"].items;
      turn.complete = hint["complete"].is_true();
      turn.note = hint["note"].str();
      turn.time_left_ms = m["time_left_ms"].integer();
      turn.bank_left_ms = m["bank_left_ms"].integer();
      const auto& events = m["events"].items;
      turn.events.insert(turn.events.end(), events.begin(), events.end());
      Json answer = Json::object();
      answer.set("request_id", m["request_id"]);
      answer.set("action", decided(decide, turn));
      turn.events.clear();
      std::cout << answer.dump() << '\n' << std::flush;
      if (!std::cout) {
        log("WARNING cannot write the answer: the referee is gone");
        return;
      }
    } else if (type == "rejection") {
      const Json& played = m["default_action"];
      log("WARNING rejected: request " + m["request_id"].str() + ": " + m["reason"].str() +
          " (strikes " + std::to_string(m["strikes"].integer()) + ", the referee played " +
          played["kind"].str() + " " + played["cards"].dump() + ")");
    } else if (type == "match_end") {
      log("INFO match end: " + m["reason"].str());
      return;
    }
  }
  log("INFO end of input");
}

}  // namespace arena_stdio

#endif  // ARENA_STDIO_HPP
