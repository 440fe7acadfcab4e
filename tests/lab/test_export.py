"""``arena export``: a season's decisions as rows, checked against the stored records and
against ``arena replay --seat N``, the seat view holding nothing of another seat's cards, a
sealed match left out, and docs/lab.md's loading example run on the files made.

Real components: a SQLite store, a duplicate season of the greedy and random Python sample
bots (two deal sets of one deal), three of its four matches played by real bot processes
through the referee (``execute_match``): the mirror of the second pair is not played, so that
pair's first match is sealed. The command line runs as its own process.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT
from league_helpers import BOTS, env, season_file

from referee.rules import variant_ids
from scheduler.execute import execute_match
from scheduler.league import open_season
from scheduler.season import load_season
from scheduler.states import MatchStatus
from scheduler.store import open_store

SEASON = "export"


def _arena(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, env=env(),
                          capture_output=True, text=True, timeout=120)


class Played:
    """The season, its store and what the export made of it (JSON lines and parquet, seat
    view; JSON lines, full)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.db = f"sqlite:///{tmp / 'arena.db'}"
        self.store = store = open_store(self.db)
        path = season_file(tmp, SEASON, [BOTS / "greedy", BOTS / "random"], deal_sets=2,
                           deals_per_set=1)
        open_season(load_season(path), store, workdir=tmp / "w", check=False,
                    out=io.StringIO())
        matches = store.pages.matches(SEASON)
        assert len(matches) == 4
        for m in matches[:3]:
            assert execute_match(self.db, m.id) == "done"
        self.sealed = matches[2].id  # its mirror, matches[3], is not played
        assert store.pages.sealed_by(self.sealed)
        self.exported = [m.id for m in matches[:2]]
        self.records = {i: store.results.record(i) for i in self.exported}
        self.runs = {}
        for name, more in (("season.jsonl", ()), ("season.parquet", ("--format", "parquet")),
                           ("full.jsonl", ("--full",))):
            self.runs[name] = _arena("export", SEASON, "--db", self.db, "--out",
                                     str(tmp / name), *more)
            assert self.runs[name].returncode == 0, self.runs[name].stderr
        self.rows = self.jsonl("season.jsonl")
        self.full = self.jsonl("full.jsonl")

    def jsonl(self, name: str) -> list[dict]:
        return [json.loads(line) for line in (self.tmp / name).read_text().splitlines()]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Played:
    return Played(tmp_path_factory.mktemp("export"))


def test_one_row_per_decision_a_seat_made(played):
    """As many rows as the stored records have actions with a seat (chance's are no
    decision), in JSON lines and in parquet alike, each its match's decisions in order."""
    decisions = sum(seat is not None for record in played.records.values()
                    for game in record.games for seat, _ in game.actions)
    assert decisions > 100
    assert len(played.rows) == decisions
    table = pq.read_table(played.tmp / "season.parquet")
    assert table.num_rows == decisions
    for record in played.records.values():
        mine = [r for r in played.rows if r["match_id"] == record.match_id]
        actions = [(seat, text) for game in record.games for seat, text in game.actions
                   if seat is not None]
        assert [(r["seat"], r["action"]) for r in mine] == actions
        assert [r["decision"] for r in mine] == list(range(len(actions)))
        assert [r["time_ms"] for r in mine] == [ms for _, ms in record.extra["timings"]]
        summary = record.summary().deals[0]
        for r in mine:
            assert r["bot"] == record.seats[r["seat"]] and r["team"] == r["seat"] % 2
            assert r["gain"] == summary.gain[r["team"]]
            assert r["net"] == summary.gain[r["team"]] - summary.gain[1 - r["team"]]
            assert r["attacking"] == (summary.attackers == r["team"])
            assert r["attacker_points"] == summary.attacker_total
    columns = table.to_pydict()
    for i in (0, len(played.rows) // 2, len(played.rows) - 1):
        row = {k: v[i] for k, v in columns.items()}
        for k in ("observation", "legal", "seen", "seen_after"):
            row[k] = None if row[k] is None else json.loads(row[k])
        assert row == played.rows[i]


def _hand_from(events: list[dict], seat: int, hand: Counter) -> None:
    """Follow ``seat``'s hand through the events it was shown (dealt, kitty taken, buried,
    played, passed), in place; a new deal or a redeal starts it afresh."""
    for e in events:
        kind = e["event"]
        if kind in ("DealStarted", "Redealt"):
            hand.clear()
        elif kind == "CardDealt" and e["seat"] == seat:
            hand[e["card"]] += 1
        elif kind == "KittyTaken" and e["seat"] == seat:
            hand.update(e["cards"])
        elif kind in ("Buried", "Played") and e["seat"] == seat:
            hand.subtract(e["cards"])
        elif kind == "CardsPassed":
            if e["receiver"] == seat:
                hand.update(e["cards"])
            if e["giver"] == seat:
                hand.subtract(e["cards"])


def test_a_seats_rows_are_what_it_saw_as_replay_prints_it(played):
    """Each seat's ``seen`` lists, then its last ``seen_after``, are the lines of ``arena
    replay MATCH --seat N``; and each row's hand is the cards its events dealt it, less what
    it buried and played."""
    for match_id in played.exported:
        for seat in range(4):
            rows = [r for r in played.rows if r["match_id"] == match_id and r["seat"] == seat]
            assert rows and all(r["seen_after"] is None for r in rows[:-1])
            out = _arena("replay", match_id, "--db", played.db, "--seat", str(seat))
            assert out.returncode == 0, out.stderr
            lines = out.stdout.splitlines()
            shown = [e for r in rows for e in r["seen"]] + rows[-1]["seen_after"]
            assert len(shown) == len(lines) > 0
            assert [json.loads(line) for line in lines] == shown
            hand: Counter = Counter()
            for r in rows:
                _hand_from(r["seen"], seat, hand)
                assert Counter(r["observation"]["hand"]) == +hand, (match_id, r["decision"])


def test_the_seat_view_holds_no_other_seats_cards_and_full_records_do(played):
    """Without ``--full`` a row has no hands nor kitty, no event private to another seat, and
    no card in its hand that its own events did not give it; with it, every hand and the
    kitty at the decision, the seat's own hand its observation's."""
    assert len(played.full) == len(played.rows)
    given: dict[tuple[str, int], set] = {}
    for r, f in zip(played.rows, played.full):
        assert "hands" not in r and "kitty" not in r
        for e in r["seen"] + (r["seen_after"] or []):
            assert e.get("private_to") in (None, r["seat"]) or (
                isinstance(e["private_to"], list) and r["seat"] in e["private_to"]), e
        mine = given.setdefault((r["match_id"], r["seat"]), set())
        for e in r["seen"]:
            if e["event"] == "CardDealt":
                mine.add(e["card"])
            elif e["event"] in ("KittyTaken", "CardsPassed"):
                mine.update(e["cards"])
        assert set(r["observation"]["hand"]) <= mine
        assert {k: v for k, v in f.items() if k not in ("hands", "kitty")} == r
        assert f["hands"][r["seat"]] == r["observation"]["hand"]
        assert sum(map(len, f["hands"])) == sum(r["observation"]["hand_sizes"])
    others = [c for f in played.full for s, h in enumerate(f["hands"]) if s != f["seat"]
              for c in h]
    assert others  # (so the check above had cards to find)
    assert any(f["kitty"] for f in played.full)
    assert pq.read_schema(played.tmp / "season.parquet").names == list(played.rows[0])


def test_a_sealed_match_is_left_out_and_counted(played):
    assert played.store.pages.match(played.sealed).status == MatchStatus.DONE
    assert played.store.results.record(played.sealed) is not None
    assert {r["match_id"] for r in played.rows} == set(played.exported)
    assert {r["match_id"] for r in played.full} == set(played.exported)
    for run in played.runs.values():
        assert "left out 1 sealed match(es)" in run.stderr, run.stderr


def test_bad_input_is_named_with_exit_status_2(played, tmp_path):
    out = _arena("export", "nope", "--db", played.db)
    assert out.returncode == 2 and f"no season 'nope'" in out.stderr
    assert f"(seasons there: {SEASON})" in out.stderr
    out = _arena("export", SEASON, "--db", f"sqlite:///{tmp_path}/none.db")
    assert out.returncode == 2 and "there is no store at" in out.stderr
    assert list(tmp_path.iterdir()) == []
    out = _arena("export", SEASON, "--db", played.db, "--format", "parquet")
    assert out.returncode == 2 and "--out" in out.stderr
    out = _arena("export", SEASON, "--db", played.db, "--no-progress")  # to stdout
    assert out.returncode == 0 and [json.loads(x) for x in out.stdout.splitlines()] == \
        played.rows


def test_the_loading_example_of_the_docs_runs(played):
    """docs/lab.md's Python blocks of "Exporting a season" run on the files made (the
    PyTorch part skips itself where PyTorch is not installed)."""
    text = (ROOT / "docs" / "lab.md").read_text(encoding="utf-8")
    section = text[text.index("## Exporting a season"):]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    out = subprocess.run([sys.executable, "-c", "\n".join(blocks)], cwd=played.tmp, env=env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    follows = sum(r["kind"] == "DECISION_KIND_FOLLOW" for r in played.rows)
    assert out.stdout.startswith(f"{follows} follows, mean cards held ")


def test_decision_times_align_with_the_decisions_or_not_at_all(played):
    """The k-th timing is the k-th decision's; one more at the end (a forfeit on a strike:
    its answer charged, no action after it) is left over; timings whose seats do not follow
    the decisions', or none, give no time at all."""
    from dataclasses import replace

    from lab.export import decision_times
    record = played.records[played.exported[0]]
    seats = [seat for game in record.games for seat, _ in game.actions if seat is not None]
    timings = record.extra["timings"]
    assert decision_times(record, seats) == [ms for _, ms in timings]

    def with_timings(t):
        return replace(record, extra={**record.extra, "timings": t})
    assert decision_times(with_timings(timings + [[0, 5.0]]), seats) == [ms for _, ms in timings]
    moved = [[(s + 1) % 4, ms] if i == 7 else [s, ms] for i, (s, ms) in enumerate(timings)]
    assert decision_times(with_timings(moved), seats) == [None] * len(seats)
    assert decision_times(with_timings(timings[1:]), seats) == [None] * len(seats)
    assert decision_times(replace(record, extra={}), seats) == [None] * len(seats)


@pytest.mark.parametrize("variant", sorted(variant_ids()))
def test_every_variant_exports_what_each_seat_was_shown(variant):
    """In every variant (two deals played in process by random players, as the export
    benchmark stores them), one row per decision, and each seat's ``seen`` lists with its
    last ``seen_after`` are its ``seat_view``."""
    import random

    from lab.export import match_rows
    from referee.match.spec import DealSpec, MatchSpec
    from tools.benchexport import played as played_in_process
    spec = MatchSpec(f"m-{variant}", variant, seat_names=["a", "b", "c", "d"],
                     deals=[DealSpec(f"{variant}:0"), DealSpec(f"{variant}:1", ("3", "5"), 1)])
    match = played_in_process(spec, random.Random(1))
    rows = match_rows(match, "s", full=True)
    assert len(rows) == sum(seat is not None for g in match.games for seat, _ in g.actions)
    assert {r["game"] for r in rows} == {0, 1} and {r["deal"] for r in rows} == {0, 1}
    for seat in range(4):
        mine = [r for r in rows if r["seat"] == seat]
        assert [e for r in mine for e in r["seen"]] + mine[-1]["seen_after"] == \
            match.seat_view(seat)
        assert all(r["hands"][seat] == r["observation"]["hand"] for r in mine)
