"""Seats played by Botzone Tractor bots, unchanged (``protocol = "botzone"``).

A Botzone bot reads one JSON line a turn, ``{"requests": [...], "responses": [...], "data": ...,
"globaldata": ...}`` (its own history: every request it was sent and what it answered), and
writes one line, ``{"response": [...], "debug": ..., "data": ..., "globaldata": ...}``. A bot
that prints ``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<`` after its answer is kept running, and from
then on reads only each next request, one JSON line; any other bot is started afresh each turn
(in its seat's sandbox, like every bot) and ended after its answer.

``BotzoneGame`` turns what one seat sees of a deal (the engine's events, as the referee sends
them or a match record holds them) into Botzone requests, and Botzone answers into actions; it
is pure, so the log export (``botzone_log``) replays a record through the very same
translation.
``BotzoneSeat`` is the ``Seat`` the match runner talks to.

Cards are Botzone ids 0-107: ``id % 54`` is 52 (LJ), 53 (BJ), or ``rank * 4 + suit`` with ranks
A, 2, ..., K and suits spades, hearts, clubs, diamonds; ``id`` and ``id + 54`` are the two copies.
Each seat keeps its own ids stable per physical card: a card dealt to it takes the copy id it
does not hold yet, a card another seat plays takes a copy id the seat has not seen.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shengji_arena.v1 import referee_pb2 as pb

from referee.rules.actions import Action, Bury, DecisionKind, Declare, Pass, Play
from referee.rules.cards import RANK_TEXT, TEXT
from referee.rules.events import (Buried, CardDealt, DealerSet, DealStarted, Declared, Event,
                                  KittyCardDrawn, KittyOpened, KittyTaken, Played, TrickWon,
                                  TrumpSet)
from referee.rules.state import CHANCE
from referee.seats.manifest import ManifestError
from referee.seats.seat import (
    TIMED_OUT,
    UNWATCHED,
    Closed,
    OverTime,
    Reply,
    RequestWatch,
    Seat,
    Unreadable,
)
from referee.wire.bot_json import load_bot_json
from referee.wire.protocol import DECISION_TO_PB, action_from_pb

KEEP_RUNNING = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"
LINE_LIMIT = 64 * 1024
"""The longest answer line read; a longer one is a garbage answer."""
EXIT_GRACE_S = 1.0
"""How long a bot has, after its answer, to ask to keep running or to exit."""
LEVEL_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "0", "J", "Q", "K", "A")
"""Botzone's level names, by our rank index (ten is "0")."""
MAJOR_TEXT = {0: "s", 1: "h", 2: "d", 3: "c", None: "n"}
"""Botzone's trump (major) letters by our suit index; "n": no-trump."""
_BZ_SUIT = (0, 1, 3, 2)
"""Our suit S H D C -> Botzone's s h c d (and back: the map is its own inverse)."""
_QUOTED = 40
_REASON = 200  # characters of why an answer is unreadable (it may quote the answer)
TIME_LIMITS = {"python": 6.0, "java": 3.0, "node": 2.0}
"""Botzone's usual time limit per turn (seconds) by the program a bot's command runs; any
other (a compiled bot) has ``TIME_LIMIT``."""
TIME_LIMIT = 1.0
MEMORY_LIMIT_MB = 256
"""Botzone's usual memory limit (MiB), a bot's unless its manifest sets ``memory_limit``."""
DECISION_OF_PB = {v: k for k, v in DECISION_TO_PB.items()}
"""A decision request's kind (the protocol's) -> the engine's ``DecisionKind``."""


def base_id(kind: int) -> int:
    """The Botzone id (0-53) of one card kind; ``+ 54`` is the other copy."""
    if kind >= 52:
        return kind
    rank, suit = kind % 13, kind // 13
    return ((rank + 1) % 13) * 4 + _BZ_SUIT[suit]


def kind_of(card_id: int) -> int:
    """Our card kind (0-53) of a Botzone id (0-107)."""
    b = card_id % 54
    if b >= 52:
        return b
    rank = (b // 4 - 1) % 13
    return _BZ_SUIT[b % 4] * 13 + rank


def time_limit_of(manifest) -> float:
    """A Botzone bot's time limit per turn in seconds: its manifest's ``time_limit``, else
    Botzone's usual one for the program its command runs (``TIME_LIMITS``: 6 for Python, 3
    for Java, 2 for Node.js; 1 for any other)."""
    if manifest.time_limit is not None:
        return manifest.time_limit
    program = Path(manifest.command[0]).name.lower().rstrip("0123456789.")
    return TIME_LIMITS.get(program, TIME_LIMIT)


def memory_limit_of(manifest) -> int:
    """A Botzone bot's memory limit in MiB: its manifest's ``memory_limit``, else Botzone's
    ``MEMORY_LIMIT_MB``."""
    return MEMORY_LIMIT_MB if manifest.memory_limit is None else manifest.memory_limit


def time_limit_text(manifest) -> str:
    """Which limit ``time_limit_of`` gives, for a timeout's reason."""
    if manifest.time_limit is not None:
        return f"the time_limit of {manifest.path or manifest.label}"
    return f"Botzone's usual limit for {Path(manifest.command[0]).name} (no time_limit in its manifest)"


class BotzoneAnswerError(ValueError):
    """A Botzone answer that cannot stand for any action here (the reason follows "seat N")."""


@dataclass
class BotzoneGame:
    """One Botzone game (one deal) as one seat sees it; see the module docstring.

    Feed it every event the seat may see (``see``), in order; at each of the seat's decisions
    ``turn`` gives the deal requests of cards dealt since (which asked nothing: answered ``[]``)
    and the request of the decision itself, or None when the decision has no Botzone
    counterpart (a declaration round after the deal, a redeal offer: answered ``Pass``)."""

    seat: int
    requests: list = field(default_factory=list)
    responses: list = field(default_factory=list)
    held: dict = field(default_factory=dict)       # kind -> ids this seat holds
    seen: set = field(default_factory=set)          # every id this seat has been shown
    pending: list = field(default_factory=list)     # deal requests of cards not yet asked
    kitty: list = field(default_factory=list)       # ids of the kitty it took up
    levels: tuple = ("2", "2")
    level: str = "2"
    banker: int = -1
    major: str = ""
    called: int = -1
    snatched: int = -1
    score: int = 0
    previous: list = field(default_factory=list)    # the last complete trick: [[ids], ...]
    current: list = field(default_factory=list)
    previous_leader: int = -1
    current_leader: int = -1
    answered: list = field(default_factory=list)    # ids of its last answer
    asked: int = 0                                  # requests the bot itself answers

    # -- what the seat sees -------------------------------------------------------------------
    def see(self, e: Event) -> None:
        """Take the next event the seat may see."""
        if isinstance(e, DealStarted):
            self.levels = tuple(RANK_TEXT[x] for x in e.levels)
            self.level = self.levels[0] if e.dealer is None else self.levels[e.dealer % 2]
            if e.dealer is not None:
                self.banker = e.dealer
        elif isinstance(e, CardDealt) and e.seat == self.seat:
            # (the request of a card shows the table as it was when the card came)
            self.pending.append(self._deal_request(self._take(e.card)))
        elif isinstance(e, DealerSet):
            self.banker, self.level = e.seat, RANK_TEXT[e.level]
        elif isinstance(e, Declared):
            if e.overturn:
                self.snatched = e.seat
            else:
                self.called = e.seat
            self.major = MAJOR_TEXT[e.trump]
        elif isinstance(e, (TrumpSet, KittyOpened, KittyCardDrawn)):
            self.major = MAJOR_TEXT[e.trump]
        elif isinstance(e, KittyTaken) and e.seat == self.seat:
            self.kitty = [self._take(k) for k in e.cards]
        elif isinstance(e, Buried) and e.seat == self.seat:
            self._give(e.cards)
        elif isinstance(e, Played):
            if e.lead:
                if len(self.current) == 4:
                    self.previous, self.previous_leader = self.current, self.current_leader
                self.current, self.current_leader = [], e.seat
            ids = (self._give(e.cards) if e.seat == self.seat
                   else [self._other(k) for k in e.cards])
            self.current.append(ids)
        elif isinstance(e, TrickWon) and self.banker >= 0 and e.seat % 2 != self.banker % 2:
            self.score += e.points

    def _take(self, kind: int) -> int:
        """The id of a card this seat receives: the copy it has not been shown."""
        card_id = self._free(kind)
        self.held.setdefault(kind, []).append(card_id)
        return card_id

    def _other(self, kind: int) -> int:
        return self._free(kind)

    def _free(self, kind: int) -> int:
        b = base_id(kind)
        card_id = b if b not in self.seen else b + 54
        self.seen.add(card_id)
        return card_id

    def _give(self, kinds) -> list[int]:
        """The ids of cards this seat gave up (played, buried): those it answered, else any
        it holds of each kind."""
        out = []
        named = list(self.answered)
        for k in kinds:
            ids = self.held.get(k, [])
            pick = next((i for i in named if i in ids), ids[0] if ids else base_id(k))
            if pick in named:
                named.remove(pick)
            if pick in ids:
                ids.remove(pick)
            out.append(pick)
        return out

    def hand_ids(self) -> list[int]:
        return sorted(i for ids in self.held.values() for i in ids)

    # -- the seat's turns ---------------------------------------------------------------------
    def _global(self) -> dict:
        return {"level": LEVEL_TEXT[RANK_TEXT.index(self.level)],
                "banking": {"banker": self.banker, "major": self.major, "called": self.called,
                            "snatched": self.snatched},
                "score": self.score}

    def _deal_request(self, card_id: int) -> dict:
        return {"stage": "deal", "deliver": [card_id], "global": self._global(),
                "playerpos": self.seat}

    def turn(self, decision: str, phase: str) -> tuple[list[dict], dict | None]:
        """(deal requests that asked nothing, this decision's request or None); each request
        is added to the history, the asked-nothing ones with the response ``[]``."""
        dealt, self.pending = self.pending, []
        live = None
        if decision == DecisionKind.DECLARE and phase == "dealing" and dealt:
            live = dealt.pop()
        elif decision == DecisionKind.BURY:
            live = {"stage": "cover", "deliver": list(self.kitty), "global": self._global(),
                    "playerpos": self.seat}
        elif decision in (DecisionKind.LEAD, DecisionKind.FOLLOW):
            current = [] if decision == DecisionKind.LEAD else self.current
            leader = self.seat if decision == DecisionKind.LEAD else self.current_leader
            previous, previous_leader = self.previous, self.previous_leader
            if decision == DecisionKind.LEAD and len(self.current) == 4:
                previous, previous_leader = self.current, self.current_leader
            live = {"stage": "play",  # (copies: the trick goes on after the request)
                    "history": [[list(p) for p in previous], [list(p) for p in current],
                                previous_leader, leader],
                    "global": self._global(), "playerpos": self.seat}
        asked_nothing = dealt
        for request in asked_nothing:
            self.requests.append(request)
            self.responses.append([])
        if live is not None:
            self.requests.append(live)
            self.asked += 1
        return asked_nothing, live

    def action(self, response: Any) -> Action:
        """The action a Botzone response to the open request stands for; raises
        ``BotzoneAnswerError`` for one that cannot be read or names a card this seat does not
        hold."""
        request = self.requests[-1]
        if not (isinstance(response, list)
                and all(isinstance(i, int) and not isinstance(i, bool) for i in response)):
            raise BotzoneAnswerError(f"answered {_shown(response)} to a "
                                     f"{request['stage']} request: expected a list of card ids")
        hand = self.hand_ids()
        for i in response:
            if not 0 <= i < 108:
                shown = i if -10**9 < i < 10**9 else _quoted(str(i))  # (digits: bounded)
                raise BotzoneAnswerError(f"answered card id {shown}: expected ids 0-107")
            if i not in hand:
                mine = [h for h in hand if kind_of(h) == kind_of(i)]
                raise BotzoneAnswerError(
                    f"answered card id {i} ({TEXT[kind_of(i)]}), which is not in its hand"
                    + (f" (its copy of that card is id {mine[0]})" if mine else ""))
            hand.remove(i)
        self.answered = list(response)
        kinds = tuple(kind_of(i) for i in response)
        stage = request["stage"]
        if stage == "deal":
            return Declare(kinds) if kinds else Pass()
        if stage == "cover":
            return Bury(kinds)
        return Play(kinds)

    def ids_of(self, action: Action) -> list[int]:
        """The ids this seat would answer for ``action`` (a default action given in its
        place, or a replayed one): the ids it holds of those cards."""
        if not hasattr(action, "cards"):
            return []
        free = {k: list(v) for k, v in self.held.items()}
        out = []
        for k in action.cards:
            ids = free.get(k) or [base_id(k)]
            out.append(ids.pop(0))
        return out

    def answer(self, response: list[int]) -> None:
        """Record the response that stands for the open request."""
        self.responses.append(list(response))
        self.answered = list(response)


def read_botzone_answer(line: bytes) -> dict | Unreadable:
    """The answer object a Botzone bot's ``line`` holds (``{"response": ..., ...}``), or an
    ``Unreadable`` saying why it is none; whatever the line holds, it never raises."""
    try:
        got = load_bot_json(line)
        if not isinstance(got, dict) or "response" not in got:
            raise ValueError('expected a JSON object with "response"')
    except (ValueError, RecursionError) as e:
        text = line.decode("utf-8", "replace")
        reason = str(e)
        if len(reason) > _REASON:
            reason = f"{reason[:_REASON]}... ({len(reason)} characters)"
        return Unreadable(f"unreadable Botzone answer {_quoted(text)}: {reason}")
    return got


def _shown(value) -> str:
    """A value a bot answered, as JSON, quoted and bounded."""
    try:
        return _quoted(json.dumps(value))
    except (ValueError, TypeError, RecursionError):  # (not from a bot's JSON line)
        return f"a {type(value).__name__}"


def _quoted(text: str) -> str:
    if len(text) <= _QUOTED:
        return repr(text)
    return f"{text[:_QUOTED]!r}... ({len(text)} characters)"


# -- the log export ---------------------------------------------------------------------------
def botzone_log(record, seat: int) -> list[dict]:
    """Each Botzone game (deal) of a match record's game as ``seat`` would have seen it: a list
    of ``{"requests": [...], "responses": [...]}``, the responses being the actions the record
    holds (a default action where the bot's answer was refused)."""
    from referee.rules.actions import parse_action
    from referee.rules.engine import apply

    state = record.new_state()
    games: list[BotzoneGame] = []
    game = None
    for who, text in record.actions:
        action = parse_action(text)
        if who is not None and who == seat and game is not None:
            _, live = game.turn(state.decision, state.phase)
            if live is not None:
                game.answer(game.ids_of(action))
        state, events = apply(state, action, None if who is None or who == CHANCE else who)
        for e in events:
            if not e.visible(seat):
                continue
            if type(e) is DealStarted:
                game = BotzoneGame(seat)
                games.append(game)
            if game is not None:
                game.see(e)
    return [{"requests": g.requests, "responses": g.responses} for g in games]


# -- the seat ---------------------------------------------------------------------------------
class _Program:
    """One started bot process: its pipes, read and written without blocking the loop, and
    the file of its turn's log."""

    def __init__(self, process, reader: asyncio.StreamReader, writer, turn_log: Path) -> None:
        self.process = process
        self.reader = reader
        self.writer = writer
        self.turn_log = turn_log

    @classmethod
    async def open(cls, process, turn_log: Path) -> _Program:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                     process.popen.stdout)
        writer, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, process.popen.stdin)
        return cls(process, reader, writer, turn_log)

    def write(self, obj) -> None:
        if not self.writer.is_closing():
            self.writer.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())

    async def line(self, deadline: float) -> bytes | None | Unreadable:
        """The next output line (without its newline); None at the output's end; raises
        ``TimeoutError`` at the deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        try:
            data = await asyncio.wait_for(self.reader.readline(), left)
        except (ValueError, asyncio.LimitOverrunError):
            return Unreadable(f"an answer line longer than {LINE_LIMIT} bytes")
        if not data:
            return None
        return data.rstrip(b"\r\n")

    async def stop(self) -> None:
        self.writer.close()
        await asyncio.to_thread(self.process.stop, 0.2)


class BotzoneSeat(Seat):
    """A seat whose bot speaks Botzone's protocol; ``start(log_path)`` starts its program (in
    its sandbox) with its output logged there, each turn or once while it keeps running.

    ``turn_limit_s`` caps each turn below the runner's deadline (Botzone's per-turn limit,
    ``time_limit_of``; ``limit_text`` says where it comes from, for a timeout's reason); its
    memory limit (``memory_limit_of``) is in the sandbox policy ``start`` is given. Every
    Botzone game (deal) starts the bot afresh."""

    def __init__(self, seat: int, start: Callable[[Path], Any], log_path: Path,
                 turn_limit_s: float | None = None, limit_text: str = "its time limit") -> None:
        self.seat = seat
        self.start = start
        self.log_path = Path(log_path)
        self.turn_limit_s = turn_limit_s
        self.limit_text = limit_text
        self.game: BotzoneGame | None = None
        self.games: list[BotzoneGame] = []
        self.program: _Program | None = None
        self.settling: asyncio.Task | None = None  # after an answer: keep running, or exit
        self.data = ""
        self.globaldata = ""
        self.turns = 0  # programs started
        self.ending: list[asyncio.Future] = []  # programs being ended
        self.unsupported: str | None = None  # why this match's game is none for a Botzone bot
        self.log_path.write_bytes(b"")

    async def connect(self, timeout: float) -> None:
        pass  # started at its first turn

    def notify(self, message: pb.RefereeMessage) -> None:
        kind = message.WhichOneof("body")
        if kind == "welcome":
            rules = json.loads(message.welcome.options_json or "{}")
            if rules.get("family") != "two_deck":
                self.unsupported = (f"is a Botzone Tractor bot: it plays the two-deck games, "
                                    f"not {message.welcome.variant}")
        elif kind == "notice":
            self._events(message.notice.events)
        elif kind == "rejection" and self.game is not None and self.game.requests:
            if len(self.game.responses) == len(self.game.requests):
                self.game.responses.pop()  # the refused answer: the default stands for it
            action = action_from_pb(message.rejection.default_action)
            self.game.answer(self.game.ids_of(action))
            self._drop_program()  # a kept-running bot starts again from the history as it stood

    def request(self, message: pb.RefereeMessage, deadline: float,
                watch: RequestWatch = UNWATCHED):
        req = message.request
        self._events(req.events)
        return self._reply(req, deadline)

    def close(self) -> None:
        self._drop_program()

    async def wait_closed(self) -> None:
        """Wait until every program this seat started has ended."""
        await asyncio.gather(*self.ending, return_exceptions=True)
        if self.settling is not None:
            self.settling.cancel()
        if self.program is not None:
            await self._end_program()

    def _drop_program(self) -> None:
        """End a kept-running program without waiting (a new game, the match's end)."""
        if self.settling is not None:
            self.settling.cancel()
            self.settling = None
        if self.program is not None:
            program, self.program = self.program, None
            program.writer.close()
            self.ending.append(asyncio.ensure_future(self._finish(program)))

    async def _finish(self, program: _Program) -> None:
        await program.stop()
        self._keep_log(program)

    def _keep_log(self, program: _Program) -> None:
        try:
            with open(self.log_path, "ab") as log:
                log.write(program.turn_log.read_bytes())
            program.turn_log.unlink()
        except OSError:
            pass

    # -- the referee's messages ---------------------------------------------------------------
    def _events(self, events) -> None:
        for pb_event in events:
            e = Event.from_dict(json.loads(pb_event.json))
            if type(e) is DealStarted:
                self.game = BotzoneGame(self.seat)
                self.games.append(self.game)
                self.data = ""
                self._drop_program()  # a new Botzone game: the bot starts afresh
            if self.game is not None:
                self.game.see(e)

    async def _reply(self, req, deadline: float) -> Reply:
        if self.unsupported:
            return Closed(self.unsupported)
        limited = False
        if self.turn_limit_s is not None:
            own = time.monotonic() + self.turn_limit_s
            limited = own < deadline  # (Botzone's limit comes first)
            if limited:
                deadline = own
        game = self.game
        assert game is not None  # a request comes within a deal: its DealStarted came first
        decision = DECISION_OF_PB[req.kind]
        asked_nothing, live = game.turn(decision, req.observation.phase)
        action: Action
        try:
            for request in asked_nothing:
                if self.program is not None or self.settling is not None:
                    await self._settle()
                if self.program is None:
                    continue  # a bot started each turn is not asked what it could not answer
                got = await self._ask(request, deadline)
                if not isinstance(got, dict):
                    return got
                if got.get("response") not in ([], None):
                    return Unreadable(
                        f"answered {_shown(got.get('response'))} to the deal of "
                        f"card id {request['deliver'][0]}, where it could call nothing "
                        "(expected [])")
            if live is None:
                action = Pass()
            else:
                await self._settle()
                got = await self._ask(live, deadline)
                if not isinstance(got, dict):
                    return got
                try:
                    action = game.action(got.get("response"))
                except BotzoneAnswerError as e:
                    return Unreadable(str(e))
                game.answer(got["response"])
        except TimeoutError:
            self._drop_program()  # (ended in the background: the bot's clock has run out)
            if limited:
                return OverTime(f"no answer within {self.turn_limit_s:g} s, its Botzone time "
                                f"limit per turn ({self.limit_text})")
            return TIMED_OUT
        return action

    async def _ask(self, request: dict, deadline: float):
        """Send one turn (to a program started now: the whole history); the bot's answer
        object, or a marker reply."""
        game = self.game
        assert game is not None  # asked within a deal
        if self.program is None:
            self.turns += 1
            turn_log = self.log_path.with_suffix(f".turn{self.turns}.log")
            try:
                process = await asyncio.to_thread(self.start, turn_log)
            except ManifestError as e:
                return Closed(f"could not be started: {e}")
            self.program = await _Program.open(process, turn_log)
            self.program.write({"requests": game.requests,
                                "responses": game.responses[:len(game.requests) - 1],
                                "data": self.data, "globaldata": self.globaldata})
        else:
            self.program.write(request)
        while True:
            line = await self.program.line(deadline)
            if line is None:  # (a per-turn program: the next turn starts it again)
                note = await self._end_program()
                return Unreadable(f"its program ended without an answer{note}")
            if isinstance(line, Unreadable):
                await self._end_program()
                return line
            if line.strip():
                break
        got = read_botzone_answer(line)
        if isinstance(got, Unreadable):
            await self._end_program()
            return got
        if isinstance(got.get("data"), str):
            self.data = got["data"][:LINE_LIMIT]
        if isinstance(got.get("globaldata"), str):
            self.globaldata = got["globaldata"][:LINE_LIMIT]
        self.settling = asyncio.ensure_future(self._after_answer())
        return got

    async def _after_answer(self) -> None:
        """After an answer: a bot that asks to keep running stays; any other is ended."""
        program = self.program
        assert program is not None  # started after an answer read from it
        try:
            line = await program.line(time.monotonic() + EXIT_GRACE_S)
        except TimeoutError:
            line = None
        if isinstance(line, bytes) and line.strip() == KEEP_RUNNING.encode():
            return
        await self._end_program()

    async def _settle(self) -> None:
        if self.settling is not None:
            settling, self.settling = self.settling, None
            await settling

    async def _end_program(self) -> str:
        """End the running program, keep its turn's log; how it ended, as a clause."""
        program, self.program = self.program, None
        if program is None:
            return ""
        try:
            await program.stop()
            note = program.process.exit_note() or {}  # reads the turn's log: before it is kept
        finally:  # also when the match's end cancels this: the turn's log is kept all the same
            self._keep_log(program)
        if not note.get("said"):
            return ""
        tail = note.get("log_tail", "").strip().splitlines()[-1:]
        return f" (it {note['said']}" + (f": {tail[0][:200]!r})" if tail else ")")
