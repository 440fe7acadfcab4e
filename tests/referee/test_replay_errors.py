"""``arena replay`` on a bad record: a clear message naming the field, no traceback, and an
exit status that says what went wrong (0 verified, 1 differs, 2 cannot be read, 3 sealed)."""

import copy
import json
import subprocess
import sys

import pytest
from league_helpers import arena

from conftest import ROOT
from referee.match.matchfile import DealResult, MatchFile, MatchResult
from referee.match.spec import TimeControl
from referee.play.selfplay import play
from referee.rules.cards import RANK_TEXT
from referee.rules.record import MatchRecord, RecordError, replay
from referee.rules.variants import rules_for

VARIANT = "two-deck-80"
SEATS = ("north", "east", "south", "west")


def _result_of(match: MatchFile, forfeit=None) -> MatchResult:
    """The result the referee would announce: the games' settled deals, the last levels."""
    deals = tuple(DealResult(g, e.deal, e.attacker_total, tuple(RANK_TEXT[x] for x in e.levels))
                  for g, e in match.deals_ended())
    last = match.games[-1].result.get("levels") if match.games else None
    winner = None if forfeit is None else 1 - forfeit.team
    return MatchResult(match.match_id, match.variant, winner, (0, 0, 0, 0), forfeit, deals,
                       None if last is None else tuple(last))


def _match(games: list[MatchRecord], forfeit=None) -> dict:
    rules = rules_for(VARIANT)
    match = MatchFile("replay-errors", VARIANT, {}, rules.to_dict(), SEATS, TimeControl(),
                      games)
    match.result = _result_of(match, forfeit)
    return json.loads(json.dumps(match.to_dict()))


# its module fixtures are built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = pytest.mark.xdist_group("test_replay_errors")


@pytest.fixture(scope="module")
def game() -> dict:
    """A bare game record of two deals, played by the engine."""
    rec = play(rules_for(VARIANT), "replay-errors", max_deals=2, record=True)[1]
    return json.loads(json.dumps(rec.to_dict()))


@pytest.fixture(scope="module")
def deal_list() -> dict:
    """A match of two one-deal games, as a season match is: each deal its own game."""
    rules = rules_for(VARIANT)
    return _match([play(rules, f"replay-errors:{i}", max_deals=1, record=True)[1]
                   for i in range(2)])


def _replay(tmp_path, data, *args, text=None) -> subprocess.CompletedProcess:
    path = tmp_path / "record.json"
    path.write_text(text if text is not None else json.dumps(data), encoding="utf-8")
    out = arena("replay", str(path), *args)
    assert "Traceback" not in out.stderr + out.stdout, out.stderr
    return out


def _unreadable(out: subprocess.CompletedProcess, *said: str) -> None:
    """Exit 2, one line on stderr naming the file and each of ``said``."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert out.stderr.startswith("arena replay: ") and "record.json: " in out.stderr, out.stderr
    for part in said:
        assert part in out.stderr, (part, out.stderr)
    assert out.stdout == ""


def test_a_good_record_and_a_deal_list_verify_with_the_match_result(tmp_path, game,
                                                                    deal_list):
    out = _replay(tmp_path, game, "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    summary = MatchFile.from_dict(game).summary()
    assert out.stdout.startswith("verified: 1 game(s), 2 deal(s), ")
    levels = " / ".join(game["result"]["levels"])
    assert f"levels after the last game {levels}" in out.stdout
    assert f"net levels {summary.net[0]:+d} / {summary.net[1]:+d}" in out.stdout

    out = _replay(tmp_path, deal_list, "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    summary = MatchFile.from_dict(deal_list).summary()
    s0, s1 = summary.score
    verdict = "a draw" if s0 == s1 else ("team 0 (north and south) wins" if s0 > s1 else
                                         "team 1 (east and west) wins")
    lines = out.stdout.splitlines()
    assert lines[0].startswith("verified: 2 game(s), 2 deal(s), "), lines
    assert lines[1] == (f"result: {verdict} (score {s0:g} : {s1:g}): net levels "
                        f"{summary.net[0]:+d} / {summary.net[1]:+d}"), lines


def test_invalid_json_cannot_be_read(tmp_path, game):
    text = json.dumps(game)
    out = _replay(tmp_path, None, "--verify", text=text[:len(text) // 2])
    _unreadable(out, "not valid JSON: line 1 column ")
    out = _replay(tmp_path, None, text="")
    _unreadable(out, "not valid JSON")


@pytest.mark.parametrize("where", ["match", "game"])
def test_options_that_are_no_object_are_named(tmp_path, deal_list, where):
    bad = copy.deepcopy(deal_list)
    (bad if where == "match" else bad["games"][1])["options"] = ["a"]
    field = "" if where == "match" else "games[1]: "
    out = _replay(tmp_path, bad, "--verify")
    _unreadable(out, f"record.json: {field}field 'options' = ['a']: expected an object of "
                     "rule options")


@pytest.mark.parametrize("options", [{"after_aces": "win"}, {"after_ace": "never"},
                                     {"decks": 3}])
def test_an_unknown_option_is_named_as_the_rules_name_it(tmp_path, deal_list, options):
    with pytest.raises(ValueError) as rules_say:
        rules_for(VARIANT, options)
    bad = copy.deepcopy(deal_list)
    bad["games"][0]["options"] = options
    _unreadable(_replay(tmp_path, bad, "--verify"),
                f"games[0]: field 'options': {rules_say.value}")
    bad = copy.deepcopy(deal_list)
    bad["options"] = options
    _unreadable(_replay(tmp_path, bad), f"record.json: field 'options': {rules_say.value}")


def test_an_option_of_the_wrong_type_is_named_in_the_rules_words(tmp_path, game):
    bad = copy.deepcopy(game)
    bad["options"] = {"kitty_size": "8"}
    _unreadable(_replay(tmp_path, bad, "--verify"),
                "field 'options': option 'kitty_size' = '8' is not allowed; expected an integer")
    bad["options"] = {"ja_reset": 1}
    _unreadable(_replay(tmp_path, bad, "--verify"),
                "field 'options': option 'ja_reset' = 1 is not allowed; expected true or false")


def test_an_unknown_variant_is_named(tmp_path, game):
    bad = copy.deepcopy(game) | {"variant": "four-deck"}
    _unreadable(_replay(tmp_path, bad, "--verify"),
                "field 'variant': unknown variant 'four-deck'; expected one of: ")


@pytest.mark.parametrize("levels", [["2", "1"], ["Z", "2"], "22", ["2"], [2, 3]])
def test_a_bad_starting_level_is_named(tmp_path, deal_list, levels):
    bad = copy.deepcopy(deal_list)
    bad["games"][1]["start"]["levels"] = levels
    _unreadable(_replay(tmp_path, bad, "--verify"),
                f"games[1]: start: field 'levels' = {levels!r}: expected null or two ranks")


def test_bad_levels_in_the_result_are_named(tmp_path, deal_list):
    bad = copy.deepcopy(deal_list)
    bad["result"]["deals"][0]["levels"] = ["2", "11"]
    _unreadable(_replay(tmp_path, bad, "--verify"),
                "result: deals[0]: field 'levels' = ['2', '11']: expected two ranks")


@pytest.mark.parametrize("change, said", [
    (lambda d: d.__setitem__("seed", [1]), "field 'seed' = [1]: expected a seed"),
    (lambda d: d.__setitem__("seed", True), "field 'seed' = True: expected a seed"),
    (lambda d: d.__setitem__("start", [1]), "field 'start' = [1]: expected an object"),
    (lambda d: d["start"].__setitem__("dealer", 7), "start: field 'dealer' = 7: expected a seat"),
    (lambda d: d["start"].__setitem__("max_deals", "2"),
     "start: field 'max_deals' = '2': expected null or a number of deals"),
    (lambda d: d["start"].__setitem__("deals", 2), "start: unknown field(s) ['deals']"),
    (lambda d: d.__setitem__("actions", "shuffle"),
     "field 'actions' = 'shuffle': expected a list"),
    (lambda d: d["actions"].__setitem__(3, ["x", d["actions"][3][1]]),
     "field 'actions[3]' = ['x', "),
    (lambda d: d["actions"].__setitem__(3, [1]), "field 'actions[3]' = [1]: expected [a seat"),
    (lambda d: d.__setitem__("events", {}), "field 'events' = {}: expected a list"),
    (lambda d: d["events"].__setitem__(2, "DealStarted"),
     "field 'events[2]' = 'DealStarted': expected an event object"),
    (lambda d: d.__setitem__("result", ["3", "2"]), "field 'result' = ['3', '2']: expected an"),
    (lambda d: d.__setitem__("variant", 80), "field 'variant' = 80: expected a variant id"),
    (lambda d: d.pop("seed"), "missing field 'seed'"),
])
def test_a_game_field_of_the_wrong_type_is_named(tmp_path, game, change, said):
    bad = copy.deepcopy(game)
    change(bad)
    _unreadable(_replay(tmp_path, bad, "--verify"), said)
    match = {"games": [bad]} | {k: v for k, v in _match([]).items() if k != "games"}
    _unreadable(_replay(tmp_path, match), f"games[0]: {said}")


@pytest.mark.parametrize("change, said", [
    (lambda d: d.__setitem__("seats", ["a", "b"]), "field 'seats' = ['a', 'b']: expected four"),
    (lambda d: d.__setitem__("games", {}), "field 'games' = {}: expected a list"),
    (lambda d: d.__setitem__("faults", "none"), "field 'faults' = 'none': expected a list"),
    (lambda d: d.__setitem__("result", None), "field 'result' = None: expected the match's"),
    (lambda d: d.pop("result"), "missing field 'result'"),
    (lambda d: d["result"].__setitem__("strikes", [0]), "result: field 'strikes' = [0]: "),
    (lambda d: d.__setitem__("format", "shengji-arena/match/0"), "field 'format' = "),
    (lambda d: d["games"].__setitem__(1, 7), "games[1]: expected a JSON object, got 7"),
])
def test_a_match_field_of_the_wrong_type_is_named(tmp_path, deal_list, change, said):
    bad = copy.deepcopy(deal_list)
    change(bad)
    _unreadable(_replay(tmp_path, bad, "--verify"), said)


def test_a_long_value_is_shortened(tmp_path, game):
    bad = copy.deepcopy(game) | {"events": "x" * 5000}
    out = _replay(tmp_path, bad, "--verify")
    _unreadable(out, "field 'events' = 'xxx")
    assert len(out.stderr) < 300, out.stderr


@pytest.mark.parametrize("empty", [None, {}])
def test_a_record_without_its_result_does_not_verify(tmp_path, game, deal_list, empty):
    def without_result(record: dict) -> None:
        if empty is None:
            del record["result"]
        else:
            record["result"] = empty
    bad = copy.deepcopy(game)
    without_result(bad)
    out = _replay(tmp_path, bad, "--verify")
    assert out.returncode == 1 and out.stderr == "", (out.stdout, out.stderr)
    assert out.stdout.startswith("DIFFERS game 0: result: missing: the game ended with ")
    bad = copy.deepcopy(deal_list)
    without_result(bad["games"][0])
    out = _replay(tmp_path, bad, "--verify")
    assert out.returncode == 1 and "DIFFERS game 0: result: missing" in out.stdout, out.stdout
    assert "game 1" not in out.stdout


def test_truncated_actions_do_not_verify(tmp_path, game, deal_list):
    bad = copy.deepcopy(deal_list)
    bad["games"][1]["actions"] = bad["games"][1]["actions"][:-3]
    out = _replay(tmp_path, bad, "--verify")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stdout.startswith("DIFFERS game 1: "), out.stdout
    # cut short with its events to match and no result: a game no forfeit ended, unverified
    bad = copy.deepcopy(game)
    cut = MatchRecord.from_dict(bad)
    cut.actions = cut.actions[:len(cut.actions) // 2]
    cut.events = replay(cut)[1]
    cut.result = {}
    out = _replay(tmp_path, json.loads(json.dumps(cut.to_dict())), "--verify")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stdout == ("DIFFERS game 0: result: missing: the record states no result, and "
                          "no forfeit cut the game short\n")


def test_only_a_forfeit_cuts_the_last_game_short(tmp_path, deal_list):
    """A forfeited match's last game stops where the fault was: it has no result, and
    verifies; the same game with no forfeit named does not."""
    from referee.match.matchfile import Forfeit
    match = MatchFile.from_dict(deal_list)
    last = match.games[-1]
    last.actions = last.actions[:len(last.actions) // 2]
    last.events, last.result = replay(last)[1], {}
    forfeited = _match(match.games, Forfeit(1, 1, "3 strikes"))
    out = _replay(tmp_path, forfeited, "--verify")
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert out.stdout.splitlines()[1].startswith(
        "result: team 0 (north and south) wins (score 1 : 0): team 1 forfeits (seat 1: "
        "3 strikes); net levels ")
    out = _replay(tmp_path, _match(match.games), "--verify")
    assert out.returncode == 1 and out.stdout.startswith("DIFFERS game 1: result: missing")


def test_an_action_that_is_no_action_is_named(tmp_path, game):
    bad = copy.deepcopy(game)
    bad["actions"][5][1] = "play 1X"
    out = _replay(tmp_path, bad, "--verify")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stdout.startswith(f"DIFFERS game 0: action 5 ({bad['actions'][5][0]}: play 1X)")


def test_a_record_that_is_not_there_cannot_be_read(tmp_path):
    from scheduler.store import Store
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    Store(url)
    out = subprocess.run([sys.executable, "-m", "cli", "replay", "m-00000", "--db", url],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("arena replay: m-00000: no such file, and no match record "
                                 f"with that id in {url}"), out.stderr
    out = subprocess.run([sys.executable, "-m", "cli", "replay", str(tmp_path), "--verify"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "cannot be read" in out.stderr, out.stderr


def test_the_errors_are_record_errors(game):
    with pytest.raises(RecordError, match=r"g.json: start: field 'levels' = \['Z', '2'\]"):
        MatchRecord.from_dict(game | {"start": {"levels": ["Z", "2"]}}, "g.json")
    with pytest.raises(RecordError, match=r"g.json: field 'options': unknown option 'x'"):
        MatchFile.from_dict(game | {"options": {"x": 1}}, "g.json")
    assert issubclass(RecordError, ValueError)
