"""The match runner: plays one match over four seats (``referee.seats.seat.Seat``: a gRPC
stream, a program's pipes) with the referee's own clock and fault policy, and makes the match
record: its faults, deal results and result as the typed values of ``referee.match.results``,
gathered in a ``MatchFile`` (``record``) whose ``to_dict()`` is what gets written.

A match is either a whole game (to its end or ``max_deals``) or a fixed list of deals, each
from its own seed with given starting levels and dealer (what duplicate league matches use).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from shengji_arena.v1 import referee_pb2 as pb

from referee.play.chance import chance_action
from referee.wire.hints import legal_hint
from referee.wire.protocol import (DECISION_TO_PB, PROTOCOL, action_to_pb, event_to_pb,
                                   observation_bytes)
import referee.rules
from referee.rules.errors import InvalidActionError
from referee.rules.families.two_deck.scoring import error_scores
from referee.rules.events import DealEnded, DealStarted, TrickWon
from referee.rules.variants import rules_for
from referee.rules.record import MatchRecord
from referee.rules.engine import new_game
from referee.rules.state import CHANCE
from referee.rules.engine import apply
from referee.seats.mailbox import loop_lag, waited_through
from referee.seats.seat import (REASON_MOST, TIMED_OUT, Closed, NotConnected,  # noqa: F401
                                OverTime, RequestWatch, Seat, Unreadable, cut)
from referee.match.faults import (GARBAGE, ILLEGAL, TIMEOUT, Forfeited, action_for,
                                  add_strike, forfeit_if_out)
from referee.match.matchfile import MatchFile
from referee.match.results import DealResult, Fault, Forfeit, MatchResult, per_seat, per_team
from referee.match.spec import MatchSpec

if TYPE_CHECKING:
    from referee.seats.launch import BotProcess

FLOOD_BATCH = 20  # unsolicited messages that make one strike
EXIT_GRACE_S = 1.0
"""How long a seat's process that is gone from its connection is given to exit, so that its
fault can say how it ended."""


_ENDED_FIRST = "ended first"  # a seat's process ended before its bot connected

_NOTICES = {False: frozenset({"deal_start", "trick", "deal_end"}),
            True: frozenset({"deal_end", "match_end"})}
"""The notices a seat is sent (when it has events not yet sent), by whether it asked for its
events with its requests (``Seat.events_with_requests``)."""


@dataclass(frozen=True, slots=True)
class Where:
    """Where in the match a request was open (what a fault there records): the game, the
    action's index in it and the request's id."""

    game: int
    action: int
    request_id: int


def _seats() -> list[float | None]:
    return [None] * 4


@dataclass(slots=True)
class Startup:
    """Where a match's start-up went: stamps on the monotonic clock (s), each taken once, with
    no I/O; a stamp not taken (a seat not launched over gRPC, a match played in process) is
    None. ``referee.serve`` adds the referee process's own start and its ``main``."""

    process: float | None = None
    """The referee process started (exec; ``/proc/self/stat``, to the kernel's clock tick)."""
    main: float | None = None
    """The referee's ``main`` entered: its interpreter and imports are behind it."""
    begin: float | None = None
    """The match began (``play_match``)."""
    sockets: float | None = None
    """The seats' sockets, their servers and their gates' listeners are ready."""
    launching: list[float | None] = field(default_factory=_seats)
    """Each seat's launch called (its sandbox and its gate spawned in it)."""
    launched: list[float | None] = field(default_factory=_seats)
    """Each seat's launch returned."""
    opened: list[float | None] = field(default_factory=_seats)
    """Each seat's first stream opened: its bot's interpreter, imports and connect behind it."""
    hellos: list[float | None] = field(default_factory=_seats)
    """Each seat's first Hello read."""
    first_request: float | None = None
    """The match's first decision request sent."""

    def phases(self) -> dict[str, float] | None:
        """The start-up in ms along its critical path, through the seat whose Hello came last:
        (referee process,) sockets and gates, sandbox spawn (the seats launched in turn up to
        that one), its bot's start (interpreter, imports, connect), its connect to its Hello,
        the last Hello to the first request; and ``total``, their sum (from the process's
        start where known, else the match's). None when a stamp is missing."""
        launched, opened, hellos = (_taken(self.launched), _taken(self.opened),
                                    _taken(self.hellos))
        if (self.begin is None or self.sockets is None or self.first_request is None
                or len(launched) + len(opened) + len(hellos) < 12):
            return None
        last = hellos.index(max(hellos))
        marks = [("sockets and gates", self.sockets), ("sandbox spawn", launched[last]),
                 ("bot start and connect", opened[last]), ("connect to Hello", hellos[last]),
                 ("last Hello to first request", self.first_request)]
        start = self.begin
        if self.process is not None and self.main is not None:
            start = self.process
            marks.insert(0, ("referee process", self.main))
            marks.insert(1, ("main to match", self.begin))  # the spec read, the memory guard
        phases, before = {}, start
        for name, t in marks:
            phases[name] = (t - before) * 1000
            before = t
        phases["total"] = (self.first_request - start) * 1000
        return phases

    def per_seat(self) -> dict[str, list[float]] | None:
        """Each seat's own phases in ms: its sandbox spawn (launch called to returned) and its
        bot's start (launch returned to its first stream). None when a stamp is missing."""
        launching, launched, opened = (_taken(self.launching), _taken(self.launched),
                                       _taken(self.opened))
        if len(launching) + len(launched) + len(opened) < 12:
            return None
        return {"sandbox spawn": [(b - a) * 1000 for a, b in zip(launching, launched)],
                "bot start and connect": [(b - a) * 1000 for a, b in zip(launched, opened)]}


def _taken(stamps: list[float | None]) -> list[float]:
    """The stamps taken (all four when none is missing)."""
    return [t for t in stamps if t is not None]


class MatchRunner:
    """Drives one match; see the module docstring."""

    def __init__(self, spec: MatchSpec, seats: Sequence[Seat],
                 processes: Sequence | None = None) -> None:
        """``processes``: each seat's ``BotProcess`` where the referee started it (else None):
        a bot whose process ends before it connects is a fault at once, and every fault of a
        seat whose process has ended says how it ended, with the end of its log."""
        self.spec = spec
        self.seats = list(seats)
        if len(self.seats) != 4:
            raise ValueError(f"a match has four seats, not {len(self.seats)}")
        self.processes = list(processes) if processes is not None else [None] * 4
        self.bot_processes: list[BotProcess] = []  # a local match's, once stopped (the tests')
        self.rules = rules_for(spec.variant, spec.options)
        self.tc = spec.time_control
        self.bank_ms: list[float] = [self.tc.bank_ms] * 4  # spent to the microsecond
        self.strikes = [0, 0, 0, 0]
        self.unsolicited = [0, 0, 0, 0]
        self.reconnects = [0, 0, 0, 0]  # noted so far, per seat
        self.faults: list[Fault] = []
        self.timings: list[list] = []
        self.pending: list[list] = [[], [], [], []]  # events not yet sent, per seat
        self.request_id = 0
        self.games: list[MatchRecord] = []
        self.deal_results: list[DealResult] = []
        self.sent: list[list] = [[], [], [], []]  # every message the runner sent, per seat
        # (for tests; a seat's own sending again on a new connection is not in it)
        self.keep_sent = False
        self.messages_sent = 0  # to every seat, requests included (for the link benchmark)
        self.events_applied = 0  # in the current game: what a message sent now may reflect
        self.open: list[Where | None] = [None] * 4  # each seat's open request
        self.excused_s = 0.0  # the loop's stalls not charged to the seats they were timing
        self.handling: tuple[int, int] | None = None
        """The seat and request id whose reply is being judged, while one is: a crash of the
        referee then names them."""
        self.startup = Startup()  # stamped by whoever starts the seats (``referee.match.local``)
        self.watches = [RequestWatch(self.tc.reconnect_window_ms,
                                     partial(self._stray, seat), partial(self._rejoined, seat))
                        for seat in range(4)]

    # -- sending ---------------------------------------------------------------------------
    def _keep(self, seat: int, msg: pb.RefereeMessage) -> None:
        self.messages_sent += 1
        if self.keep_sent:  # (game, events applied so far, message): for the tests
            game = len(self.games) - 1
            done = self.events_applied if self.games else 0
            self.sent[seat].append((game, done, msg))

    def _send(self, seat: int, msg: pb.RefereeMessage) -> None:
        """Send a message that wants no answer."""
        self._keep(seat, msg)
        self.seats[seat].notify(msg)

    def _queue_events(self, events) -> None:
        pending = self.pending
        for e in events:
            message = event_to_pb(e)  # once, whoever sees it
            if getattr(e, "private_to", None) is None:  # public: every seat
                for queue in pending:
                    queue.append(message)
                continue
            for seat in range(4):
                if e.visible(seat):
                    pending[seat].append(message)

    def _notice(self, reason: str) -> None:
        """Send the notice ``reason`` to each seat with events not yet sent that takes it."""
        for seat in range(4):
            if self.pending[seat] and reason in _NOTICES[self.seats[seat].events_with_requests]:
                msg = pb.RefereeMessage()
                notice = msg.notice  # filled in place: no copy into the message
                notice.reason = reason
                notice.events.extend(self.pending[seat])
                self._send(seat, msg)
                self.pending[seat] = []

    def _welcome(self, seat: int) -> pb.Welcome:
        return pb.Welcome(seat=seat, match_id=self.spec.match_id, variant=self.rules.variant,
                          options_json=json.dumps(self.rules.to_dict()),
                          time_control=self.tc.to_pb(), protocol=PROTOCOL)

    # -- the match -------------------------------------------------------------------------
    async def run(self) -> MatchResult:
        """Play the match; its result, as announced to every seat at the end."""
        started, cpu_started = time.monotonic(), time.process_time()
        forfeit = None
        try:
            await self._wait_all_connected()
            self.play_started = time.monotonic()
            cpu_started = time.process_time()
            for seat in range(4):  # from now on, a seat's new connection starts with it too
                self._send(seat, pb.RefereeMessage(welcome=self._welcome(seat)))
                self._turn(seat, False)
            if self.spec.deals is not None:
                for i, deal in enumerate(self.spec.deals):
                    await self._play_game(deal.seed, list(deal.levels), deal.dealer, 1, i)
            else:
                await self._play_game(self.spec.seed, None, None, self.spec.max_deals, 0)
        except Forfeited as f:
            forfeit = Forfeit(f.seat, f.seat % 2, f.reason)
        result = self._result(forfeit)
        end = pb.MatchEnd(reason="forfeit" if forfeit else "finished",
                          result_json=json.dumps(result.to_dict()))
        self._notice("match_end")  # events left after a forfeit, to seats that wait for them
        for seat in range(4):
            self._send(seat, pb.RefereeMessage(match_end=end))
            self.seats[seat].close()
        self.elapsed_s = time.monotonic() - started
        self.play_s = time.monotonic() - getattr(self, "play_started", started)
        # the referee process's CPU time (every thread) over the play, for the link benchmark
        self.play_cpu_s = time.process_time() - cpu_started
        return result

    async def _wait_all_connected(self) -> None:
        """Wait until every seat's bot is there; the first that is not (its connection timed
        out or was refused, or its process ended first) forfeits, and every seat that failed
        by then has its fault."""
        timeout = self.tc.connect_timeout_ms / 1000
        tasks = [asyncio.ensure_future(self._connect(seat, timeout)) for seat in range(4)]
        try:
            failed: list[tuple[int, str]] = []
            for next_done in asyncio.as_completed(tasks):
                why = await next_done
                if why is not None:
                    failed = [(seat, reason) for seat, t in enumerate(tasks)
                              if t.done() and (reason := t.result()) is not None]
                    break
        finally:
            for t in tasks:
                t.cancel()
        for seat, why in failed:
            ended = why is _ENDED_FIRST
            await self._process_fault(seat, "never_connected",
                                      f"seat {seat} {'did not connect' if ended else why}",
                                      ended_first=ended)
        if failed:
            raise Forfeited(failed[0][0], "never connected")

    async def _connect(self, seat: int, timeout: float) -> str | None:
        """None once ``seat``'s bot is there, else why not."""
        connect = asyncio.ensure_future(self.seats[seat].connect(timeout))
        waits = {connect}
        process = self.processes[seat]
        if process is not None:
            waits.add(asyncio.ensure_future(process.exited()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        if connect.done() and not connect.cancelled():
            error = connect.exception()
            if error is None:
                return None
            if isinstance(error, NotConnected):
                return str(error)
            raise error
        return _ENDED_FIRST

    async def _process_fault(self, seat: int, kind: str, reason: str, where=None,
                             ended_first: bool = False) -> None:
        """A fault without a strike for a seat that is gone: with how its process ended
        (given ``EXIT_GRACE_S`` to end) and the end of its log, where the referee started it;
        ``ended_first``: its process ended before what ``reason`` says it did not do."""
        process = self.processes[seat]
        note = None
        if process is not None:
            try:
                await asyncio.wait_for(process.exited(), EXIT_GRACE_S)
            except TimeoutError:
                pass
            note = await asyncio.to_thread(process.exit_note)
        if note is None:
            self._fault(seat, kind, reason, where, strike=False)
            return
        said = f": its process {note['said']} first" if ended_first else \
            f"; its process {note['said']}"
        self._fault(seat, kind, reason + said, where, strike=False,
                    exit_status=note["status"], log_tail=note["log_tail"])

    async def _play_game(self, seed, levels, dealer, max_deals, index) -> None:
        state = new_game(self.rules, levels=levels, dealer=dealer, max_deals=max_deals)
        record = MatchRecord(self.rules.variant, self.spec.options, seed,
                             {"levels": levels, "dealer": dealer, "max_deals": max_deals})
        self.games.append(record)
        self.events_applied = 0
        # The last step, recorded and announced once the next request is on its way: the seat
        # to act waits for nothing but its request (it gets that step's events in it), and the
        # other seats' notices go out while it thinks.
        held = None
        steps = 0  # actions applied in this game, chance included
        while not state.is_terminal:
            if state.turn == CHANCE:
                if held is not None:
                    self._settle(record, index, *held)
                seat, action = None, chance_action(state, seed)
                state, events = apply(state, action, seat)
            else:
                seat = state.turn
                default_seed = f"{seed}:{steps}"  # the hint's sample and a default action
                msg = self._request(state, seat, default_seed)
                where = Where(index, steps, self.request_id)
                sent = time.monotonic()  # the seat's clock starts as its request goes out
                self.open[seat] = where
                reply = self.seats[seat].request(msg, sent + self._limit(seat),
                                                 self.watches[seat])
                if self.seats[seat].sent_by_loop:
                    try:
                        await asyncio.sleep(0)  # the request out first, then the work it hides
                    except BaseException:  # (cancelled: the reply is never awaited)
                        reply.close()
                        raise
                self._turn(seat, True)
                if held is not None:
                    self._settle(record, index, *held)
                action, applied = await self._answer(state, seat, reply, sent, default_seed,
                                                     where)
                self._turn(seat, False)
                # an answer was applied when it was judged; a default is applied here
                state, events = applied if applied is not None else apply(state, action, seat)
            self._queue_events(events)
            self.events_applied += len(events)
            steps += 1
            held = (seat, action, events)
        if held is not None:
            self._settle(record, index, *held)
        record.finish(state)

    def _settle(self, record: MatchRecord, index: int, seat, action, events) -> None:
        """Record a step and send the notice it calls for (to every seat with events not yet
        sent that takes it: the seat to act next had them in its request)."""
        dicts = [e.to_dict() for e in events]
        record.add(seat, action, events, dicts)
        reason = None
        for e in events:
            if isinstance(e, DealEnded):
                self.deal_results.append(DealResult.of(index, e))
                reason = "deal_end"
            elif isinstance(e, TrickWon) and reason is None:
                reason = "trick"
            elif isinstance(e, DealStarted) and reason is None:
                reason = "deal_start"
        if reason:
            self._notice(reason)

    def _request(self, state, seat: int, default_seed: str) -> pb.RefereeMessage:
        """``seat``'s decision request: observation, hint, time and the events it has not been
        sent yet (they count as sent)."""
        self.request_id += 1
        msg = pb.RefereeMessage()
        request = msg.request  # filled in place: no copy of the request into the message
        request.request_id = self.request_id
        request.kind = DECISION_TO_PB[state.decision]
        request.observation.MergeFromString(observation_bytes(state, seat))
        request.hint.CopyFrom(legal_hint(state, default_seed))
        request.time_left_ms = self.tc.per_decision_ms
        request.bank_left_ms = int(self.bank_ms[seat])  # (spent to the microsecond)
        request.events.extend(self.pending[seat])
        self.pending[seat] = []
        self._keep(seat, msg)
        if self.startup.first_request is None:
            self.startup.first_request = time.monotonic()  # (nearly: it is sent at once)
        return msg

    def _turn(self, seat: int, acting: bool) -> None:
        """A launched seat's CPU share: the seat to act's while its request is open, a waiting
        seat's otherwise (``SandboxPolicy.ponder_share``)."""
        process = self.processes[seat]
        if process is not None:
            process.turn(acting)

    def _limit(self, seat: int) -> float:
        """Seconds ``seat`` has for its decision: the allowance and its time bank."""
        return (self.tc.per_decision_ms + self.bank_ms[seat]) / 1000

    def _stray(self, seat: int) -> None:
        """The seat's watch: a message that answers no open request (flood strikes)."""
        self._unsolicited(seat, self.open[seat])

    def _rejoined(self, seat: int) -> None:
        """The seat's watch: the bot is back on a new connection (past ``max_reconnects`` in
        the match, a forfeit)."""
        self._note_reconnects(seat, self.open[seat])

    async def _answer(self, state, seat: int, reply, started: float, default_seed: str,
                      where: Where):
        """Wait for ``seat``'s ``reply`` (the awaitable of a request sent at ``started``) and
        judge it: the action to play and, for an accepted answer, what applying it gave."""
        try:
            self._note_reconnects(seat, where)  # any between its turns
        except Forfeited:
            reply.close()  # not waited for
            raise
        self.handling = (seat, where.request_id)
        try:
            try:
                got = await reply
                judged = await self._judge(state, seat, got, started, default_seed, where)
            except Forfeited:
                raise
            except Exception as e:  # whatever the bot sent fails its own seat, not the match
                reason = (f"the referee could not judge its answer: {type(e).__name__}: "
                          f"{cut(str(e))}")
                judged = self._default(state, seat, default_seed, GARBAGE, reason, where), None
        except Forfeited:
            self.handling = None
            raise
        self.handling = None  # (left set when the referee fails all the same: it names the seat)
        return judged

    async def _judge(self, state, seat: int, got, started: float, default_seed: str,
                     where: Where):
        """``_answer`` once ``seat``'s reply ``got`` is there: the action its seat read, or
        why there is none (``referee.seats.seat.Reply``)."""
        allowance = self.tc.per_decision_ms
        if got is TIMED_OUT or isinstance(got, OverTime):
            self._spend(seat, started, allowance)
            return self._default(state, seat, default_seed, TIMEOUT,
                                 got.reason if isinstance(got, OverTime) else
                                 f"no answer within {allowance} ms and the time bank",
                                 where), None
        if isinstance(got, Closed):
            await self._process_fault(seat, "disconnect", f"seat {seat} {got.reason}", where)
            raise Forfeited(seat, "disconnected")
        self._spend(seat, started, allowance)
        if isinstance(got, Unreadable):
            return self._default(state, seat, default_seed, GARBAGE, got.reason, where), None
        try:  # judged by applying it (what check does, and the result is wanted anyway)
            applied = apply(state, got, seat)
        except InvalidActionError as e:
            return self._default(state, seat, default_seed, GARBAGE, cut(str(e)),
                                 where), None
        except ValueError as e:  # (its reason may list every card the bot named)
            return self._default(state, seat, default_seed, ILLEGAL, cut(str(e)),
                                 where), None
        return got, applied

    def _spend(self, seat: int, started: float, allowance: int) -> None:
        """Charge ``seat`` for its decision, open since ``started``: the time it took, less the
        stall of the referee's loop its answer waited through (``LoopLag``: the referee lost
        it), timed as if it had been taken where it arrived."""
        now = time.monotonic()
        stalled = waited_through(started, now, loop_lag())
        self.excused_s += stalled
        used = round((now - started - stalled) * 1000, 3)
        self.timings.append([seat, used])
        if used > allowance:
            self.bank_ms[seat] = max(0, self.bank_ms[seat] - (used - allowance))

    def _note_reconnects(self, seat: int, where: Where | None) -> None:
        """Record the seat's reconnections since they were last noted; past ``max_reconnects``
        in the match its team forfeits."""
        made = self.seats[seat].rejoins
        new = made - self.reconnects[seat]
        if new <= 0:
            return
        self.reconnects[seat] = made
        times = f" {new} times" if new > 1 else ""
        self._fault(seat, "reconnect", f"seat {seat} reconnected{times}", where, strike=False)
        if made > self.tc.max_reconnects:
            raise Forfeited(seat, f"reconnected {made} time{'s' if made > 1 else ''} (at most "
                                f"{self.tc.max_reconnects})")

    def _unsolicited(self, seat: int, where: Where | None) -> None:
        self.unsolicited[seat] += 1
        if self.unsolicited[seat] % FLOOD_BATCH == 0:
            self._fault(seat, "flood", f"{self.unsolicited[seat]} messages that answer no open "
                        "request", where)

    def _default(self, state, seat: int, seed: str, kind: str, reason: str, where: Where):
        action = action_for(state, seat, seed)
        self._fault(seat, kind, reason, where, action=action)
        self._send(seat, pb.RefereeMessage(rejection=pb.Rejection(
            request_id=where.request_id, reason=f"{kind}: {reason}",
            strikes=self.strikes[seat], default_action=action_to_pb(action))))
        return action

    def _fault(self, seat: int, kind: str, reason: str, where: Where | None,
               strike: bool = True, action=None, exit_status: int | None = None,
               log_tail: str | None = None) -> None:
        """Record a fault of ``seat`` (with a strike unless ``strike`` is false; past
        ``max_strikes`` its team forfeits); ``action``: the move played for it."""
        if strike:
            add_strike(self.strikes, seat)
        self.faults.append(Fault(
            seat, kind, reason, self.strikes[seat],
            game=None if where is None else where.game,
            action=None if where is None else where.action,
            request_id=None if where is None else where.request_id,
            default_action=None if action is None else action.text(),
            exit_status=exit_status, log_tail=log_tail))
        if strike:
            forfeit_if_out(self.strikes, seat, self.tc.max_strikes)

    def _result(self, forfeit: Forfeit | None) -> MatchResult:
        last = self.games[-1].result if self.games else None
        scores = None
        if forfeit and self.rules.single_deal:  # Botzone: an error ends the game so
            scores = error_scores(forfeit.seat)
        elif last and "scores" in last:
            scores = last["scores"]
        match_points = titles = None
        if last and "match_points" in last:
            match_points, titles = per_seat(last["match_points"]), per_seat(last["titles"])
        return MatchResult(
            self.spec.match_id, self.rules.variant,
            winner_team=(1 - forfeit.team) if forfeit else (
                last.get("winner_team") if last else None),
            strikes=per_seat(self.strikes), forfeit=forfeit, deals=tuple(self.deal_results),
            levels=per_team(last["levels"]) if last else None,
            match_points=match_points, titles=titles,
            scores=None if scores is None else per_seat(scores))

    def record(self, result: MatchResult, refused: Sequence[dict] = (),
               refused_more: int = 0) -> MatchFile:
        """The match record: rules, seeds, every engine game (actions, events with who could
        see them), faults, the connections refused (``refused``, and a count of
        ``refused_more``), timings, the result and which rules engine judged it."""
        return MatchFile(
            self.spec.match_id, self.rules.variant, self.spec.options, self.rules.to_dict(),
            per_seat(self.spec.seat_names), self.tc, self.games, self.faults, result,
            engine=referee.rules.ENGINE,
            extra={"refused_streams": list(refused), "refused_streams_more": refused_more,
                   "timings": self.timings})

