"""Where a match's start-up goes: the referee's stamps (``referee.match.runner.Startup``) and the
breakdown ``arena bench link`` prints from them."""

from __future__ import annotations

import time

from conftest import ROOT
from referee.match.local import run_match
from referee.match.runner import Startup
from referee.match.spec import MatchSpec
from referee.seats.manifest import load_manifest
from referee.serve import process_started
from tools.benchlink import STARTUP_PHASES, referee_process_ms, startup_breakdown

RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")


def test_a_match_start_up_is_stamped_and_its_phases_add_up(tmp_path):
    """Four sandboxed random bots (as ``arena bench link`` plays them): every phase of the
    start-up is there and positive, they add up to its whole, which lies within the match's
    wall time; each seat's own spawn and bot start are positive; the record holds none of it
    (the golden records do not move)."""
    spec = MatchSpec(match_id="startup", variant="two-deck-fry", seed="startup", max_deals=1)
    wall = time.monotonic()
    _, record, runner = run_match(spec, [RANDOM] * 4, tmp_path)
    wall = (time.monotonic() - wall) * 1000
    phases = runner.startup.phases()
    assert phases is not None and list(phases) == [*STARTUP_PHASES, "total"], phases
    assert all(ms > 0 for ms in phases.values()), phases
    assert sum(phases[name] for name in STARTUP_PHASES) <= phases["total"] + 1e-6
    assert phases["total"] < wall
    per_seat = runner.startup.per_seat()
    assert per_seat is not None and all(len(v) == 4 and min(v) > 0 for v in per_seat.values())
    assert not [key for key in record if "start" in key], sorted(record)
    line = startup_breakdown([runner], [150.0])
    for name in (*STARTUP_PHASES, "referee process 150", "total", "largest: "):
        assert name in line, (name, line)


def test_the_served_referee_counts_its_own_process_start():
    """``referee.serve`` adds the process's start and its ``main``: the referee process comes
    first, the phases still add up to the whole, now from the process's start."""
    now = time.monotonic()
    started = process_started()
    assert started is not None and started < now
    stamps = Startup(process=10.0, main=10.2, begin=10.21, sockets=10.22,
                     launching=[10.22, 10.25, 10.28, 10.31],
                     launched=[10.25, 10.28, 10.31, 10.34],
                     opened=[10.5, 10.7, 10.6, 10.55], hellos=[10.51, 10.71, 10.61, 10.56],
                     first_request=10.72)
    phases = stamps.phases()
    assert phases is not None and list(phases)[:2] == ["referee process", "main to match"]
    assert round(phases["referee process"]) == 200 and round(phases["total"]) == 720
    assert round(phases["sandbox spawn"]) == 60  # seats 0 and 1 in turn: seat 1 said Hello last
    assert abs(sum(v for k, v in phases.items() if k != "total") - phases["total"]) < 1e-6
    assert Startup(begin=1.0, sockets=1.1, first_request=2.0).phases() is None  # no seat's
    assert Startup().per_seat() is None


def test_the_referee_process_start_is_timed_forked_and_by_exec():
    """The referee process's start, timed apart, in ms: forked from one started ahead (what a
    worker does) it skips the interpreter and the imports that exec pays each time."""
    forked, by_exec = referee_process_ms(3, forked=True), referee_process_ms(3)
    assert len(forked) == len(by_exec) == 3 and all(0 < ms < 60_000 for ms in forked + by_exec)
    assert sorted(forked)[1] < sorted(by_exec)[1], (forked, by_exec)
