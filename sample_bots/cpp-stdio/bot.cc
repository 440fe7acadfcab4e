// cpp-stdio-sample: a Shengji Arena bot in C++17 with the standard library only.
// arena_stdio.hpp speaks the stdio protocol (docs/protocol.md, section 15) and calls choose once
// per decision; choose answers with one of the request's listed legal actions (ties: the first
// listed). Logs go to standard error, the seat's log.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "arena_stdio.hpp"

using arena_stdio::Json;
using arena_stdio::Turn;

namespace {

// A card's rank: 2 .. A as 0 .. 12, the little joker 13, the big joker 14.
int Rank(const std::string& card) {
  if (card == "LJ") return 13;
  if (card == "BJ") return 14;
  if (card.size() < 2) return 0;
  const std::string r = card.substr(0, card.size() - 1);
  if (r == "J") return 9;
  if (r == "Q") return 10;
  if (r == "K") return 11;
  if (r == "A") return 12;
  return std::atoi(r.c_str()) - 2;
}

// The action with the fewest cards, then the highest (or lowest) ranks.
Json Fewest(const std::vector<Json>& actions, bool highest) {
  std::size_t best = 0;
  long best_score = 0;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const std::vector<Json>& cards = actions[i]["cards"].items;
    long sum = 0;
    for (const Json& c : cards) sum += Rank(c.str());
    long score = -1000L * static_cast<long>(cards.size()) + (highest ? sum : -sum);
    if (i == 0 || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return actions[best];
}

Json PassOrFirst(const std::vector<Json>& actions) {
  for (const Json& a : actions) {
    if (a["kind"].str() == "ACTION_KIND_PASS") return a;
  }
  return actions[0];
}

Json Choose(const Turn& turn) {
  const std::vector<Json>& actions = turn.actions;
  if (actions.empty()) return arena_stdio::action("ACTION_KIND_PASS");  // (never: one is listed)
  const std::string kind = turn.kind;
  if (kind == "DECISION_KIND_LEAD") return Fewest(actions, true);
  if (kind == "DECISION_KIND_FOLLOW") return Fewest(actions, false);
  if (kind == "DECISION_KIND_DECLARE") {
    // pass, but at the final chances when nobody has declared: then declare (four bots that
    // always pass would never fix a trump)
    const Json& observation = turn.observation;
    if (observation["phase"].str() == "declare_round" &&
        observation["declarations"].items.empty()) {
      std::vector<Json> declares;
      for (const Json& a : actions) {
        if (a["kind"].str() == "ACTION_KIND_DECLARE") declares.push_back(a);
      }
      if (!declares.empty()) return Fewest(declares, true);
    }
    return PassOrFirst(actions);
  }
  if (kind == "DECISION_KIND_BURY" || kind == "DECISION_KIND_RETURN") return actions[0];
  return PassOrFirst(actions);  // REDEAL, UPRISING, ...: optional, pass when allowed
}

}  // namespace

int main() {
  const char* seat = std::getenv("ARENA_SEAT");
  const char* match = std::getenv("ARENA_MATCH_ID");
  int decisions = 0;
  std::cerr << "[cpp-stdio-sample] INFO seat " << (seat ? seat : "?") << " of match "
            << (match ? match : "?") << std::endl;
  arena_stdio::play([&decisions](const Turn& turn) {
    ++decisions;
    return Choose(turn);
  });
  std::cerr << "[cpp-stdio-sample] INFO done: " << decisions << " decisions" << std::endl;
  return 0;
}
