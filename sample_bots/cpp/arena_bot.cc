// Shengji Arena sample bot in C++.
//
// The referee starts this program as its own process with four environment variables:
//   ARENA_REFEREE   where to connect: "unix:///abs/path/seatN.sock" or "host:port"
//   ARENA_SEAT      this bot's seat, 0-3
//   ARENA_TOKEN     the seat token to send in Hello
//   ARENA_MATCH_ID  the match id (logged only)
// It opens one Referee.Play stream, sends Hello, then answers every DecisionRequest with one of
// the actions the referee listed in request.hint(). Everything else is logged to stderr.
//
// To write your own bot, change ChooseAction() below: it gets the whole DecisionRequest (the
// seat's observation, the events since its previous request, the legal-action hint) and returns
// the Action to play.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shengji_arena/v1/referee.grpc.pb.h"

namespace v1 = shengji_arena::v1;

namespace {

constexpr char kBotName[] = "cpp-sample";
constexpr char kBotVersion[] = "1.0.0";
constexpr char kProtocol[] = "shengji-arena/1";
constexpr auto kConnectTimeout = std::chrono::seconds(10);  // to reach the referee at start
constexpr auto kCloseTimeout = std::chrono::seconds(5);     // for the stream to end after MatchEnd

std::string g_prefix = "[cpp-sample] ";

void Log(const std::string& line) { std::cerr << g_prefix << line << std::endl; }

struct Config {
  std::string referee;
  int seat = -1;
  std::string token;
  std::string match_id;
};

// Reads the ARENA_* variables; on failure returns false with a message in *error.
bool LoadConfig(Config* cfg, std::string* error) {
  std::vector<std::string> missing;
  auto get = [&missing](const char* name) -> std::string {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
      missing.push_back(name);
      return "";
    }
    return v;
  };
  cfg->referee = get("ARENA_REFEREE");
  std::string seat = get("ARENA_SEAT");
  cfg->token = get("ARENA_TOKEN");
  cfg->match_id = get("ARENA_MATCH_ID");
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    *error = "missing environment variable(s): " + names +
             " (the arena referee sets ARENA_REFEREE, ARENA_SEAT, ARENA_TOKEN and ARENA_MATCH_ID"
             " when it starts the bot; see README.md)";
    return false;
  }
  if (seat.size() != 1 || seat[0] < '0' || seat[0] > '3') {
    *error = "ARENA_SEAT must be 0, 1, 2 or 3, got '" + seat + "'";
    return false;
  }
  cfg->seat = seat[0] - '0';
  return true;
}

// ---- strategy ---------------------------------------------------------------------------

// Strength of one card for comparing plays: 2 3 4 5 6 7 8 9 10 J Q K A, then LJ, BJ.
// Cards are rank then suit ("10H", "QS"); jokers are "LJ" and "BJ". Unknown text counts as -1.
int CardRank(const std::string& card) {
  if (card == "BJ") return 14;
  if (card == "LJ") return 13;
  if (card.size() < 2) return -1;
  static const char* const kRanks[] = {"2", "3", "4",  "5", "6", "7", "8",
                                       "9", "10", "J", "Q", "K", "A"};
  const std::string rank = card.substr(0, card.size() - 1);
  for (int i = 0; i < 13; ++i) {
    if (rank == kRanks[i]) return i;
  }
  return -1;
}

int HighestRank(const v1::Action& action) {
  int best = -1;
  for (const auto& c : action.cards()) best = std::max(best, CardRank(c));
  return best;
}

// Picks one of the listed actions (the referee guarantees the list is not empty and that every
// listed action is legal). Deterministic:
//   LEAD:   the listed PLAY with the most cards (ties: the first listed)
//   FOLLOW: the listed PLAY whose highest card is lowest (ties: the first listed)
//   others: PASS when it is listed (decline every optional declaration, redeal, ...),
//           otherwise the first listed action (BURY, RETURN).
int ChooseIndex(const v1::DecisionRequest& req) {
  const auto& actions = req.hint().actions();
  int best = -1;
  switch (req.kind()) {
    case v1::DECISION_KIND_LEAD:
      for (int i = 0; i < actions.size(); ++i) {
        if (actions[i].kind() != v1::ACTION_KIND_PLAY) continue;
        if (best < 0 || actions[i].cards_size() > actions[best].cards_size()) best = i;
      }
      break;
    case v1::DECISION_KIND_FOLLOW:
      for (int i = 0; i < actions.size(); ++i) {
        if (actions[i].kind() != v1::ACTION_KIND_PLAY) continue;
        if (best < 0 || HighestRank(actions[i]) < HighestRank(actions[best])) best = i;
      }
      break;
    default:
      for (int i = 0; i < actions.size(); ++i) {
        if (actions[i].kind() == v1::ACTION_KIND_PASS) {
          best = i;
          break;
        }
      }
      break;
  }
  return best >= 0 ? best : 0;
}

v1::Action ChooseAction(const v1::DecisionRequest& req) {
  if (req.hint().actions_size() == 0) {
    // Not expected (the referee always lists at least one action); PASS lets it reject and
    // play its default rather than leave the request unanswered.
    Log("request " + std::to_string(req.request_id()) + ": empty hint, answering PASS");
    v1::Action pass;
    pass.set_kind(v1::ACTION_KIND_PASS);
    return pass;
  }
  return req.hint().actions(ChooseIndex(req));
}

// ---- logging helpers --------------------------------------------------------------------

std::string Cards(const google::protobuf::RepeatedPtrField<std::string>& cards) {
  std::string s;
  for (const auto& c : cards) s += (s.empty() ? "" : " ") + c;
  return "[" + s + "]";
}

std::string Describe(const v1::Action& a) {
  return v1::ActionKind_Name(a.kind()) + " " + Cards(a.cards());
}

std::string StatusText(const grpc::Status& s) {
  static const char* const kCodes[] = {
      // grpc::StatusCode 0-16, in order
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
      "UNAUTHENTICATED"};
  const int code = static_cast<int>(s.error_code());
  const std::string name =
      (code >= 0 && code <= 16) ? kCodes[code] : "code " + std::to_string(code);
  return name + ": " + (s.error_message().empty() ? "no message" : s.error_message());
}

}  // namespace

int main() {
  Config cfg;
  std::string error;
  if (!LoadConfig(&cfg, &error)) {
    std::cerr << "arena_bot: error: " << error << std::endl;
    return 1;
  }
  g_prefix = "[cpp-sample seat " + std::to_string(cfg.seat) + "] ";

  auto channel = grpc::CreateChannel(cfg.referee, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + kConnectTimeout)) {
    std::cerr << "arena_bot: error: cannot connect to the referee at '" << cfg.referee
              << "' within " << kConnectTimeout.count() << " s (ARENA_REFEREE)" << std::endl;
    return 1;
  }
  auto stub = v1::Referee::NewStub(channel);
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriter<v1::BotMessage, v1::RefereeMessage>> stream(
      stub->Play(&ctx));

  v1::BotMessage hello;
  hello.mutable_hello()->set_token(cfg.token);
  hello.mutable_hello()->set_bot_name(kBotName);
  hello.mutable_hello()->set_bot_version(kBotVersion);
  hello.mutable_hello()->set_protocol(kProtocol);
  bool writable = stream->Write(hello);

  bool match_ended = false;
  int requests = 0;
  v1::RefereeMessage msg;
  // Read to the end even once a write failed (the referee ended the stream as a late answer
  // went out): the match end may be waiting unread, and Finish() with a message unread blocks.
  while (stream->Read(&msg)) {
    switch (msg.body_case()) {
      case v1::RefereeMessage::kWelcome: {
        const auto& w = msg.welcome();
        Log("welcome: match " + w.match_id() + " seat " + std::to_string(w.seat()) + " variant " +
            w.variant() + " protocol " + w.protocol() + " per-decision " +
            std::to_string(w.time_control().per_decision_ms()) + " ms bank " +
            std::to_string(w.time_control().bank_ms()) + " ms");
        if (w.seat() != cfg.seat) Log("warning: welcome seat differs from ARENA_SEAT");
        break;
      }
      case v1::RefereeMessage::kRequest: {
        const auto& req = msg.request();
        v1::BotMessage answer;
        answer.mutable_answer()->set_request_id(req.request_id());
        *answer.mutable_answer()->mutable_action() = ChooseAction(req);
        ++requests;
        if (writable && !stream->Write(answer)) writable = false;
        break;
      }
      case v1::RefereeMessage::kNotice:
        Log("notice: " + msg.notice().reason() + " (" +
            std::to_string(msg.notice().events_size()) + " events)");
        break;
      case v1::RefereeMessage::kRejection: {
        const auto& r = msg.rejection();
        Log("rejection: request " + std::to_string(r.request_id()) + ": " + r.reason() +
            " (strikes " + std::to_string(r.strikes()) + ", referee played " +
            Describe(r.default_action()) + ")");
        break;
      }
      case v1::RefereeMessage::kMatchEnd:
        Log("match end: " + msg.match_end().reason() + " " + msg.match_end().result_json());
        match_ended = true;
        break;
      default:
        Log("ignoring an empty or unknown referee message");
        break;
    }
    if (match_ended) break;
  }

  if (match_ended) {
    // Close our side and wait (briefly) for the referee to close its side.
    std::mutex mu;
    std::condition_variable cv;
    bool closed = false;
    std::thread watchdog([&] {
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_for(lock, kCloseTimeout, [&] { return closed; })) ctx.TryCancel();
    });
    stream->WritesDone();
    while (stream->Read(&msg)) {
    }
    stream->Finish();  // any status is fine: the match is over
    {
      std::lock_guard<std::mutex> lock(mu);
      closed = true;
    }
    cv.notify_all();
    watchdog.join();
    Log("done after " + std::to_string(requests) + " decisions");
    return 0;
  }

  if (writable) stream->WritesDone();
  grpc::Status status = stream->Finish();  // (every message is read: it cannot block)
  if (status.ok()) {
    Log("stream closed by the referee after " + std::to_string(requests) + " decisions");
    return 0;
  }
  std::cerr << "arena_bot: error: the referee stream at '" << cfg.referee
            << "' failed: " << StatusText(status) << std::endl;
  return 1;
}
