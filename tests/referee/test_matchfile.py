"""The match file and the match spec: the two contracts between the scheduler and the referee.

A real match is played between bot processes (the local runner, as ``arena match`` plays one);
its record verifies, stops verifying when one action or one event is altered, summarises to what
its ``DealEnded`` events say, and shows each seat only what it was shown."""

import copy
import json
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from referee.match.local import run_match
from referee.match.matchfile import (DealResult, Fault, Forfeit, MatchFile, MatchResult,
                                     MatchSummary)
from referee.match.spec import DealSpec, MatchSpec, SeatBot, TimeControl
from referee.rules import apply, legal_actions, parse_action
from referee.rules.events import CardDealt, DealEnded, DealerSet, DealStarted, Event
from referee.rules.record import MatchRecord
from referee.seats.manifest import Manifest, load_manifest

RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")
GREEDY = load_manifest(ROOT / "sample_bots" / "python" / "greedy")
ILLEGAL = Manifest("faulty-illegal", "0", (sys.executable, str(ROOT / "tests" / "bots" /
                                                               "faulty.py"), "illegal"),
                   "grpc", ROOT / "tests" / "bots")  # the SDK: every Python bot has it
QUICK = TimeControl(per_decision_ms=1000, bank_ms=500, connect_timeout_ms=30_000)


def _played(spec: MatchSpec, bots, folder) -> dict:
    """The match's record as it reads back from its file."""
    _, record, _ = run_match(spec, bots, folder)
    path = folder / "match.json"
    path.write_text(json.dumps(record))
    return json.loads(path.read_text())


# its module fixtures are built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = pytest.mark.xdist_group("test_matchfile")


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> dict:
    """Two deals of two-deck-fry, the second starting from other levels and dealer."""
    deals = [DealSpec("mf-a"), DealSpec("mf-b", ("5", "3"), 1)]
    spec = MatchSpec("mf", "two-deck-fry", deals=deals,
                     seat_names=["greedy", "random", "greedy", "random"])
    return _played(spec, [GREEDY, RANDOM, GREEDY, RANDOM], tmp_path_factory.mktemp("mf"))


@pytest.fixture(scope="module")
def forfeited(tmp_path_factory) -> dict:
    """Seat 1 answers every request with an illegal play: three strikes, its team forfeits."""
    spec = MatchSpec("mf-forfeit", "two-deck-fry", seed="f", max_deals=1, time_control=QUICK)
    return _played(spec, [RANDOM, ILLEGAL, RANDOM, RANDOM], tmp_path_factory.mktemp("forfeit"))


# -- reading and verifying ---------------------------------------------------------------------
def test_a_played_match_reads_back_whole_and_verifies(record, tmp_path):
    match = MatchFile.from_dict(record, "mf")
    assert match.match_id == "mf" and len(match.games) == 2 and match.faults == []
    assert match.seats == ("greedy", "random", "greedy", "random")
    assert match.verify() == []
    assert match.to_dict() == record  # nothing the referee wrote is lost
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record))
    assert MatchFile.load(path).verify() == []


def test_a_forfeited_match_verifies_and_names_its_faults(forfeited):
    match = MatchFile.from_dict(forfeited, "mf-forfeit")
    assert match.verify() == []
    assert match.result.forfeit == Forfeit(1, 1, "3 strikes") and match.result.winner_team == 0
    assert [f.kind for f in match.faults] == ["illegal"] * 3
    assert all(f.seat == 1 and f.default_action and f.game == 0 for f in match.faults)
    summary = match.summary()
    assert summary.forfeit_team == 1 and summary.score == (1.0, 0.0)
    assert summary.faults == 3 and summary.strikes == (0, 3, 0, 0)


def test_a_match_a_seat_never_joined_has_no_games(tmp_path):
    never = Manifest("faulty-never", "0", (sys.executable, str(ROOT / "tests" / "bots" /
                                                              "faulty.py"), "never"),
                     "grpc", ROOT / "tests" / "bots")
    # the never-joining bot ends at once, which the referee sees without waiting out the
    # timeout; a short timeout only failed the other seats now and then on a loaded machine
    spec = MatchSpec("mf-never", "two-deck-80", seed="n", max_deals=1,
                     time_control=TimeControl(connect_timeout_ms=30_000))
    match = MatchFile.from_dict(_played(spec, [RANDOM, RANDOM, never, RANDOM], tmp_path))
    assert match.games == [] and match.verify() == []
    assert [f.kind for f in match.faults] == ["never_connected"] and match.faults[0].game is None
    assert match.summary().deals == () and match.summary().forfeit_team == 0


def _replayed_to(game: MatchRecord, n: int):
    state = game.new_state()
    for seat, text in game.actions[:n]:
        state, _ = apply(state, parse_action(text), seat)
    return state


def test_another_legal_action_does_not_verify(record):
    """Action i of game 0 (the first lead) replaced by another legal lead: what follows no
    longer replays (a later action does not fit the new lead, or the events differ)."""
    bad = copy.deepcopy(record)
    game = MatchRecord.from_dict(bad["games"][0])
    i = next(i for i, (seat, text) in enumerate(game.actions)
             if seat is not None and text.startswith("play"))
    seat, text = game.actions[i]
    other = next(a for a in legal_actions(_replayed_to(game, i)) if a.text() != text)
    bad["games"][0]["actions"][i] = [seat, other.text()]
    problems = MatchFile.from_dict(bad).verify()
    assert problems and all(p.startswith("game 0: ") for p in problems), problems
    later = re.match(r"game 0: action (\d+) ", problems[0])
    assert (later and int(later[1]) > i) or "event" in problems[0], problems


def test_an_illegal_action_does_not_verify_and_is_named(record):
    bad = copy.deepcopy(record)
    i = next(i for i, (seat, text) in enumerate(bad["games"][1]["actions"])
             if text.startswith("play"))
    bad["games"][1]["actions"][i][1] = "play BJ BJ BJ BJ BJ"
    problems = MatchFile.from_dict(bad).verify()
    assert len(problems) == 1 and problems[0].startswith(f"game 1: action {i} "), problems


def test_an_altered_event_does_not_verify(record):
    """Event j of game 1 (the first card dealt) says another card was dealt."""
    bad = copy.deepcopy(record)
    events = bad["games"][1]["events"]
    j = next(j for j, e in enumerate(events) if e["event"] == "CardDealt")
    events[j]["card"] = "BJ" if events[j]["card"] != "BJ" else "LJ"
    problems = MatchFile.from_dict(bad).verify()
    assert problems and problems[0].startswith(f"game 1: event {j}: replayed"), problems


def test_a_result_that_disagrees_with_the_games_does_not_verify(record):
    bad = copy.deepcopy(record)
    bad["result"]["deals"][1]["attacker_total"] += 5
    assert MatchFile.from_dict(bad).verify() == [
        f"result: deals[1]: the result says {DealResult.from_dict(bad['result']['deals'][1])}, "
        f"the games' events {DealResult.from_dict(record['result']['deals'][1])}"]


# -- the summary --------------------------------------------------------------------------------
def test_the_summary_agrees_with_the_deal_ended_events(record):
    match = MatchFile.from_dict(record)
    summary = match.summary()
    ended = [Event.from_dict(e) for g in record["games"] for e in g["events"]
             if isinstance(Event.from_dict(e), DealEnded)]
    assert len(summary.deals) == len(ended) == 2 == len(match.result.deals)
    for d, e, r in zip(summary.deals, ended, match.result.deals):
        assert d.attacker_total == e.attacker_total == r.attacker_total
        assert [*d.after] == [*r.levels] and d.attackers in (0, 1)
    assert summary.deals[1].before == ("5", "3")  # the deal list's starting levels
    assert summary.net[0] == sum(d.gain[0] - d.gain[1] for d in summary.deals) == -summary.net[1]
    assert summary.forfeit_team is None and summary.faults == 0
    assert MatchSummary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary


def _one_deal(events, forfeit=None) -> MatchFile:
    game = MatchRecord("two-deck-80", {}, "s",
                       events=[e.to_dict() | {"visible_to": "all"} for e in events])
    result = MatchResult("m", "two-deck-80", None, (0, 0, 0, 0), forfeit, ())
    return MatchFile("m", "two-deck-80", {}, {"after_ace": "stop"}, ("a", "b", "a", "b"),
                     TimeControl(), [game], result=result)


def _deal(before, after, dealer_set=None):
    events = [DealStarted(0, 0, 0, before, 0)]
    if dealer_set is not None:  # an attacker declared and took over
        events.append(DealerSet(dealer_set, before[dealer_set % 2], "declared"))
    events.append(DealEnded(0, (), 130, 0, (0, 0), 130, after, 1, None))
    return events


def test_a_summary_follows_the_dealer_through_the_deal():
    s = _one_deal(_deal((0, 0), (2, 0), dealer_set=1)).summary()
    assert s.deals[0].dealer == 1 and s.deals[0].attackers == 0
    assert s.deals[0].gain == (2, 0) and s.net == (2, -2) and s.score == (1.0, 0.0)
    forfeit = Forfeit(0, 0, "3 strikes")
    assert _one_deal(_deal((0, 0), (2, 0)), forfeit).summary().score == (0.0, 1.0)
    # sent back from J: a loss, not a wrap
    assert _one_deal(_deal((9, 0), (0, 0))).summary().deals[0].gain == (-9, 0)


# -- what each seat saw -------------------------------------------------------------------------
def test_each_seats_decision_times_are_read_from_the_records_timings(record):
    """Median and 95th percentile by nearest rank over each seat's own decisions, worked out
    here by hand; a played match has one timing per decision; a bad pair is named."""
    match = _one_deal([])
    match.extra["timings"] = ([[0, 10], [1, 5.5], [0, 30], [0, 20]]
                              + [[3, float(ms)] for ms in range(20, 0, -1)])
    times = {t.seat: t for t in match.decision_times()}
    assert sorted(times) == [0, 1, 3]  # seat 2 made no decision
    assert (times[0].decisions, times[0].median_ms, times[0].p95_ms, times[0].max_ms) == \
        (3, 20.0, 30.0, 30.0)
    assert (times[1].decisions, times[1].median_ms, times[1].p95_ms) == (1, 5.5, 5.5)
    assert (times[3].decisions, times[3].median_ms, times[3].p95_ms, times[3].max_ms) == \
        (20, 10.0, 19.0, 20.0)
    played = MatchFile.from_dict(record, "mf")
    assert sum(t.decisions for t in played.decision_times()) == len(record["timings"]) > 0
    from referee.match.matchfile import RecordError
    match.extra["timings"] = [[0, 1], [4, 2.0]]
    with pytest.raises(RecordError, match=r"timings\[1\]"):
        match.decision_times()


def test_a_seat_view_holds_no_other_seats_private_events(record):
    match = MatchFile.from_dict(record)
    every = [Event.from_dict(e) for g in record["games"] for e in g["events"]]
    for seat in range(4):
        view = [Event.from_dict(e) for e in match.seat_view(seat)]
        assert all(e.visible(seat) for e in view)
        dealt = [e for e in view if isinstance(e, CardDealt)]
        assert dealt and all(e.seat == seat for e in dealt)
        # everything it could see is there: the public events and its own
        assert view == [e for e in every if e.visible(seat)]
        assert len(view) < len(every)
    with pytest.raises(ValueError, match="seat 4: expected a seat 0-3"):
        match.seat_view(4)


# -- the match spec -----------------------------------------------------------------------------
def _bot(name: str) -> SeatBot:
    return SeatBot.of(name, GREEDY)


SPECS = [
    MatchSpec("whole", "two-deck-80", seed="7", max_deals=3),
    MatchSpec("list", "two-deck-fry", {"after_ace": "win"},
              deals=[DealSpec("a"), DealSpec("b", ("5", "3"), None)],
              time_control=TimeControl(per_decision_ms=500, max_reconnects=0),
              seat_names=["x", "y", "x", "y"], bots=[_bot("x"), _bot("y")] * 2),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.match_id)
def test_a_spec_reads_back_equal(spec):
    assert MatchSpec.from_dict(spec.to_dict()) == spec
    assert MatchSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


def test_a_bot_without_a_pythonpath_keeps_the_form_stored_before_the_field():
    bot = SeatBot("x", Manifest("x", "1", ("./x",), "grpc", Path("/bots/x")))
    assert list(bot.to_dict()) == ["name", "manifest_name", "version", "command", "protocol",
                                   "folder", "path"]
    assert SeatBot.from_dict(bot.to_dict()) == bot
    lib = SeatBot("y", Manifest("y", "1", ("python3", "bot.py"), "grpc", Path("/bots/y"),
                                pythonpath=(Path("/bots/y/lib"),)))
    assert lib.to_dict()["pythonpath"] == ["/bots/y/lib"]
    assert SeatBot.from_dict(lib.to_dict()) == lib


@pytest.mark.parametrize("change, message", [
    ({"max_deals": 0}, "field 'max_deals' = 0: expected a number of deals, 1 or more"),
    ({"sead": "1"}, "unknown field(s) ['sead']"),
    ({"variant": None}, "field 'variant' = None: expected a variant id"),
    ({"seats": ["a", "b"]}, "field 'seats' = ['a', 'b']: expected four names"),
    ({"time_control": {"bank_ms": -1}}, "time_control: field 'bank_ms' = -1: expected a "
                                        "positive integer"),
    ({"time_control": {"per_decision": 5}}, "time_control: unknown field(s) ['per_decision']"),
    ({"deals": [{"seed": "a"}, {"seed": "b", "levels": ["2", "1"]}]},
     "deals[1]: field 'levels' = ['2', '1']: expected two ranks"),
    ({"deals": [{"seed": "a", "dealer": 4}]}, "deals[0]: field 'dealer' = 4: expected a seat"),
    ({"bots": [{"name": "x"}]}, "field 'bots' = [{'name': 'x'}]: expected four bots"),
])
def test_a_bad_spec_field_is_named(change, message):
    data = SPECS[0].to_dict() | change
    if "deals" in change:
        del data["seed"], data["max_deals"]
    with pytest.raises(ValueError) as e:
        MatchSpec.from_dict(data, "spec.json")
    assert str(e.value).startswith("spec.json: ") and message in str(e.value), str(e.value)


def test_a_missing_spec_field_is_named():
    with pytest.raises(ValueError, match=r"spec.json: missing field 'match_id'"):
        MatchSpec.from_dict({"variant": "two-deck-80"}, "spec.json")


def test_a_bad_match_file_field_is_named(record):
    bad = copy.deepcopy(record)
    bad["games"][0]["format"] = "shengji-arena/record/0"
    with pytest.raises(ValueError, match=r"m.json: games\[0\]: field 'format'"):
        MatchFile.from_dict(bad, "m.json")
    fault = Fault(1, "timeout", "no answer", 1, 0, 12, 3, "pass")
    bad = record | {"faults": [fault.to_dict() | {"seat": 7}]}
    with pytest.raises(ValueError, match=r"m.json: faults\[0\]: field 'seat' = 7: expected a "
                                         r"seat 0-3"):
        MatchFile.from_dict(bad, "m.json")
    assert Fault.from_dict(fault.to_dict()) == fault
    with pytest.raises(ValueError, match=r"m.json: field 'format' = 'x': expected "):
        MatchFile.from_dict(record | {"format": "x"}, "m.json")
    with pytest.raises(ValueError, match=r"m.json: field 'engine' = 'turbo': expected "
                                         r"\"compiled\" or \"pure\""):
        MatchFile.from_dict(record | {"engine": "turbo"}, "m.json")
    assert MatchFile.from_dict(record | {"engine": "pure"}).to_dict()["engine"] == "pure"


def _mutations(summary: dict):
    """Every one-field change of a stored summary: each field (and each deal's field) removed,
    set to another JSON type or value, and an unknown field added."""
    odd = [None, True, 1, -1, 2.5, "x", "A", [], [1], [1, 2], ["2", "A"], [1, 2, 3, 4], {}]
    for key in list(summary) + ["bogus"]:
        if key in summary:
            yield {k: v for k, v in summary.items() if k != key}
        for value in odd:
            yield {**summary, key: value}
    for i, deal in enumerate(summary["deals"]):
        for key in list(deal) + ["bogus"]:
            for value in odd + [...]:
                changed = dict(deal)
                if value is ...:
                    changed.pop(key, None)
                else:
                    changed[key] = value
                deals = list(summary["deals"])
                deals[i] = changed
                yield {**summary, "deals": deals}
        yield {**summary, "deals": summary["deals"] + ["not a deal"]}


def test_a_stored_summary_is_read_in_one_checked_pass(record, forfeited):
    """The one reading of a stored summary (the standings read thousands) checks every field:
    a one-field change is refused with an error that starts at the summary, or read as a
    summary that writes and reads back the same."""
    from referee.match.matchfile import RecordError
    seen = {"same": 0, "refused": 0}
    for match in (record, forfeited):
        summary = MatchFile.from_dict(match).summary()
        stored = json.loads(json.dumps(summary.to_dict()))
        assert MatchSummary.from_dict(stored) == summary
        for data in _mutations(stored):
            try:
                read = MatchSummary.from_dict(copy.deepcopy(data))
            except RecordError as e:
                assert str(e).startswith("summary"), e
                seen["refused"] += 1
                continue
            assert MatchSummary.from_dict(json.loads(json.dumps(read.to_dict()))) == read, data
            seen["same"] += 1
    assert seen["same"] > 10 and seen["refused"] > 100
