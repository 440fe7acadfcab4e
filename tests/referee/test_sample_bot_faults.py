"""The Node.js and C++ sample bots, as real processes, when things go wrong: the referee rejects
a play, the referee ends the streams mid-deal, and the clock is too tight to answer in time.

Each match has four copies of the bot under test. Between the bots and the match runner, each
gRPC seat is wrapped (``Tapped``): the wrapper can change what the runner is given, send a
request only once its deadline has passed, or cut the match short. Every wait is on a process
or the match itself, with a bound."""

from __future__ import annotations

import asyncio
import subprocess
import time

import pytest
from conftest import ROOT
from shengji_arena.v1 import referee_pb2 as pb

from referee.match import local
from referee.match.local import run_match
from referee.match.spec import MatchSpec, TimeControl
from referee.seats.grpc_seat import SeatHub
from referee.seats.launch import launch
from referee.seats.mailbox import Mailbox
from referee.seats.manifest import load_manifest
from referee.seats.sandbox import sandbox_problem
from referee.rules.actions import Action, Play
from referee.rules.cards import Card
from referee.seats.seat import TIMED_OUT, UNWATCHED, Closed, Seat

BOTS = {"node": load_manifest(ROOT / "sample_bots" / "node"),
        "cpp": load_manifest(ROOT / "sample_bots" / "cpp")}
BUILT = {"node": "node_modules", "cpp": "build/arena_bot"}
SANDBOX = None if sandbox_problem() is None else "none"
TC = TimeControl(per_decision_ms=2000, bank_ms=5000, max_strikes=3, reconnect_window_ms=1000,
                 connect_timeout_ms=10000)
EXIT_BOUND_S = 5.0
"""How long a bot may take to exit once its stream has ended."""
CRASH_MARKS = ("Segmentation fault", "core dumped", "terminate called", "Aborted",
               "Uncaught", "UnhandledPromiseRejection", "    at ")
PLAYS = (pb.DECISION_KIND_LEAD, pb.DECISION_KIND_FOLLOW)


@pytest.fixture(params=sorted(BOTS))
def bot(request):
    manifest = BOTS[request.param]
    assert (manifest.folder / BUILT[request.param]).exists(), "run make bots"
    return manifest


class Inbox(Mailbox):
    """A seat's inbox that notes each answer's request id as it reaches the referee."""

    __slots__ = ("answered", "news")

    def __init__(self) -> None:
        super().__init__()
        self.answered: list[int] = []
        self.news = asyncio.Event()

    def put_nowait(self, item) -> None:
        if item is not None and item.HasField("answer"):
            self.answered.append(item.answer.request_id)
            self.news.set()
        super().put_nowait(item)

    async def answer_to(self, rid: int, bound: float) -> bool:
        """Wait up to ``bound`` seconds for the answer to request ``rid``; whether it came."""
        until = time.monotonic() + bound
        while rid not in self.answered:
            self.news.clear()
            try:
                await asyncio.wait_for(self.news.wait(), until - time.monotonic())
            except TimeoutError:
                return rid in self.answered
        return True


class Tapped(Seat):
    """A gRPC seat whose requests go through ``table.request``."""

    def __init__(self, inner: Seat, table: Table, seat: int) -> None:
        self.inner, self.table, self.seat = inner, table, seat

    async def connect(self, timeout: float):
        return await self.inner.connect(timeout)

    def request(self, message, deadline, watch=UNWATCHED):
        return self.table.request(self.seat, self.inner, message, deadline, watch)

    def notify(self, message) -> None:
        self.inner.notify(message)

    def close(self) -> None:
        self.table.closing(self.seat)
        self.inner.close()

    @property
    def rejoins(self) -> int:
        return self.inner.rejoins


class Table:
    """One match's four tapped seats, their bot processes and servers, and what was seen: per
    seat, each request with the reply the runner was given, the answers that reached the
    referee, and whether the bot was alive when the runner ended its seat."""

    def __init__(self, monkeypatch) -> None:
        self.hub: SeatHub | None = None
        self.procs: dict[int, object] = {}
        self.servers: list = []
        self.seen: list[list] = [[], [], [], []]
        self.alive_at_end: dict[int, bool] = {}
        table = self

        class Hub(SeatHub):
            def __init__(self, *a, **kw) -> None:
                super().__init__(*a, **kw)
                for link in self.links:
                    link.inbox = Inbox()
                self.seats = [Tapped(s, table, i) for i, s in enumerate(self.seats)]
                table.hub = self

        def launched(manifest, *, seat, **kw):
            proc = launch(manifest, seat=seat, **kw)
            table.procs[seat] = proc
            return proc
        create_server = local.create_server

        def server(*a, **kw):
            s = create_server(*a, **kw)
            table.servers.append(s)
            return s
        monkeypatch.setattr(local, "SeatHub", Hub)
        monkeypatch.setattr(local, "launch", launched)
        monkeypatch.setattr(local, "create_server", server)

    def answered(self, seat: int) -> list[int]:
        return self.hub.links[seat].inbox.answered

    def requested(self, seat: int) -> list[int]:
        return [req.request_id for req, _ in self.seen[seat]]

    def request(self, seat: int, inner: Seat, message, deadline: float, watch):
        return self.reply(seat, message, inner.request(message, deadline, watch))

    async def reply(self, seat: int, message, pending):
        got = await self.tamper(seat, message, pending)
        self.seen[seat].append((message.request, got))
        return got

    async def tamper(self, seat: int, message, pending):
        return await pending

    def closing(self, seat: int) -> None:
        proc = self.procs.get(seat)
        if seat not in self.alive_at_end:  # the runner's close, not the cleanup's after it
            self.alive_at_end[seat] = proc is not None and proc.popen.poll() is None

    async def wait_exits(self, bound: float) -> dict[int, float | None]:
        """Seconds until each bot process exited, None for one still running after ``bound``."""
        started = time.monotonic()

        def wait(proc):
            try:
                proc.popen.wait(timeout=bound)
            except subprocess.TimeoutExpired:
                return None
            return time.monotonic() - started
        waits = await asyncio.gather(*(asyncio.to_thread(wait, p) for p in self.procs.values()))
        return dict(zip(self.procs, waits))


def _play(bot, tmp_path, match_id: str, tc: TimeControl = TC):
    spec = MatchSpec(match_id=match_id, variant="two-deck-fry", seed="5", max_deals=1,
                     time_control=tc)
    return run_match(spec, [bot] * 4, tmp_path, sandbox=SANDBOX)


def _log(tmp_path, seat: int) -> str:
    return (tmp_path / f"seat{seat}.log").read_text(errors="replace")


def _no_crash(text: str) -> None:
    marks = [m for m in CRASH_MARKS if m in text]
    assert not marks, (marks, text[-2000:])


def _ended_well(table: Table, logs: dict[int, str]) -> None:
    """Every bot was alive when its seat was ended, read the match's end and exited 0."""
    assert table.alive_at_end == {0: True, 1: True, 2: True, 3: True}
    codes = [table.procs[s].popen.returncode for s in range(4)]
    assert codes == [0, 0, 0, 0], (codes, {s: logs[s][-500:] for s in range(4)})
    for s in range(4):
        assert "match end" in logs[s], logs[s][-1000:]
        _no_crash(logs[s])


def _answered(got) -> bool:
    """Whether a seat's reply is an action, read for the open request (an answer to another
    request is ``Unreadable``)."""
    return isinstance(got, Action)


# -- a rejection ------------------------------------------------------------------------------
class Rejecting(Table):
    """Seat 1's first answer to a play (lead or follow) reaches the runner as five big jokers,
    a play no seat can hold."""

    rejected: int | None = None

    async def tamper(self, seat, message, pending):
        got = await pending
        if seat == 1 and self.rejected is None and message.request.kind in PLAYS \
                and _answered(got):
            self.rejected = message.request.request_id
            return Play((Card.parse("BJ"),) * 5)
        return got


def test_a_rejected_play_is_read_and_the_bot_plays_on_to_the_end(bot, tmp_path, monkeypatch):
    """Seat 1's play is rejected as illegal: one strike, and the referee's default is played
    for it. The bot logs the rejection with its reason and strikes, sends nothing more for that
    request, and answers every later one (plays among them); the match finishes and every bot
    exits 0 after the match's end."""
    table = Rejecting(monkeypatch)
    result, record, runner = _play(bot, tmp_path, f"reject-{bot.name}")
    logs = {s: _log(tmp_path, s) for s in range(4)}
    rid = table.rejected
    assert rid is not None
    assert result["forfeit"] is None and len(result["deals"]) == 1, (record["faults"],
                                                                     logs[1][-2000:])
    assert result["strikes"] == [0, 1, 0, 0]
    [fault] = record["faults"]
    assert fault["seat"] == 1 and fault["kind"] == "illegal" and fault["request_id"] == rid
    assert fault["strikes"] == 1 and fault["default_action"]
    [line] = [x for x in logs[1].splitlines() if "rejection" in x]
    assert f"request {rid}" in line and "illegal" in line and "BJ" in line, line
    assert "strikes 1" in line, line
    later = [(req, got) for req, got in table.seen[1] if req.request_id > rid]
    assert any(req.kind in PLAYS for req, _ in later)
    assert all(_answered(got) for req, got in later)
    assert table.answered(1) == table.requested(1)  # each request once, none again
    assert runner.unsolicited == [0, 0, 0, 0]
    _ended_well(table, logs)


# -- streams ended mid-deal -------------------------------------------------------------------
class Cutting(Table):
    """At seat 0's fifth request the referee cuts the match short: it ``ends`` every stream
    without a match end, or ``stops`` its servers; then it waits for the bots to exit."""

    def __init__(self, monkeypatch, how: str) -> None:
        super().__init__(monkeypatch)
        self.how = how
        self.exits: dict[int, float | None] | None = None

    async def tamper(self, seat, message, pending):
        if seat != 0 or len(self.seen[0]) < 4:
            return await pending
        pending.close()
        if self.how == "ends":
            for s in self.hub.seats:
                s.inner.close()
        else:
            await asyncio.gather(*(s.stop(grace=None) for s in self.servers))
        self.exits = await self.wait_exits(EXIT_BOUND_S)
        return Closed("cut off by the referee")


@pytest.mark.parametrize("how,code,said", [
    ("ends", 0, {"node": "the referee closed the stream",
                 "cpp": "stream closed by the referee"}),
    ("stops", 1, {"node": "error: lost the connection to the referee",
                  "cpp": "error: the referee stream"}),
])
def test_a_stream_cut_short_makes_the_bot_exit_at_once(bot, tmp_path, monkeypatch, how, code,
                                                      said):
    """Mid-deal, the referee ends every seat's stream without a match end (``ends``), or its
    servers stop (``stops``): each of the four bots exits by itself within the bound, with the
    exit status its README gives for that case, a line saying why, and no crash."""
    table = Cutting(monkeypatch, how)
    result, _, _ = _play(bot, tmp_path, f"cut-{how}-{bot.name}")
    assert table.exits is not None, "the match never reached seat 0's fifth request"
    logs = {s: _log(tmp_path, s) for s in range(4)}
    assert result["forfeit"] is not None and result["forfeit"]["seat"] == 0
    assert sorted(table.exits) == [0, 1, 2, 3]
    late = {s: t for s, t in table.exits.items() if t is None or t > EXIT_BOUND_S}
    assert not late, (late, {s: logs[s][-500:] for s in late})
    codes = [table.procs[s].popen.returncode for s in range(4)]
    assert codes == [code] * 4, (codes, {s: logs[s][-500:] for s in range(4)})
    for s in range(4):
        assert said[bot.name.split("-")[0]] in logs[s], logs[s][-1000:]
        assert "match end" not in logs[s]
        _no_crash(logs[s])


# -- a tight clock ----------------------------------------------------------------------------
TIGHT = TimeControl(per_decision_ms=1, bank_ms=1, max_strikes=100000, reconnect_window_ms=1000,
                    connect_timeout_ms=10000)


class Overdue(Table):
    """Every other request of seat 1 goes out only once its deadline has passed: the runner
    times it out, and is held until the bot's answer has come in (within a bound, once no
    earlier one failed to) before it plays the default and sends the rejection."""

    def __init__(self, monkeypatch) -> None:
        super().__init__(monkeypatch)
        self.overdue: list[int] = []
        self.late: list[int] = []  # those whose answer came
        self.asked = 0

    def request(self, seat, inner, message, deadline, watch):
        if seat != 1:
            return super().request(seat, inner, message, deadline, watch)
        self.asked += 1
        if self.asked % 2:
            return super().request(seat, inner, message, deadline, watch)
        self.overdue.append(message.request.request_id)
        return self._overdue(seat, inner, message, deadline, watch)

    async def _overdue(self, seat, inner, message, deadline, watch):
        while (left := deadline - time.monotonic()) >= 0:
            await asyncio.sleep(left + 0.001)  # (until the deadline: what is tested)
        got = await self.reply(seat, message, inner.request(message, deadline, watch))
        rid = message.request.request_id
        if self.late == self.overdue[:-1] and \
                await self.hub.links[seat].inbox.answer_to(rid, EXIT_BOUND_S):
            self.late.append(rid)
        return got


def test_under_a_tight_clock_late_answers_are_dropped_and_the_bot_plays_on(bot, tmp_path,
                                                                          monkeypatch):
    """A 1 ms allowance and a 1 ms bank, and every other request of seat 1 sent only after its
    deadline. Each request is answered in time or charged a timeout (its default played, a
    rejection sent); the bot answers the overdue requests all the same, once each, and goes
    on after the rejections; a late answer is never taken for the answer to a later request.
    The match finishes, every bot is alive at its end and exits 0 after it."""
    table = Overdue(monkeypatch)
    result, record, runner = _play(bot, tmp_path, f"tight-{bot.name}", TIGHT)
    logs = {s: _log(tmp_path, s) for s in range(4)}
    assert result["forfeit"] is None and len(result["deals"]) == 1, logs[1][-2000:]
    assert {f["kind"] for f in record["faults"]} <= {"timeout", "flood"}
    for seat in range(4):
        seen, answered = table.seen[seat], table.answered(seat)
        assert seen and all(got is TIMED_OUT or _answered(got) for req, got in seen), seat
        timed_out = [req.request_id for req, got in seen if got is TIMED_OUT]
        faults = [f["request_id"] for f in record["faults"]
                  if f["seat"] == seat and f["kind"] == "timeout"]
        assert faults == timed_out
        assert runner.unsolicited[seat] <= len(timed_out)
        assert len(set(answered)) == len(answered) and set(answered) <= set(table.requested(seat))
    assert len(table.overdue) >= 5 and table.late == table.overdue
    assert all(got is TIMED_OUT for req, got in table.seen[1]
               if req.request_id in table.overdue)
    line = next(x for x in logs[1].splitlines() if f"request {table.overdue[0]}" in x)
    assert "rejection" in line and "timeout" in line, line
    _ended_well(table, logs)
