"""The match file: the record the referee writes of one match (``shengji-arena/match/1``), read
back as typed values.

It holds the rules played, the seats, the time control, every engine game of the match (a
``MatchRecord`` each: a deal-list match has one game per deal), the faults charged or noted and
the result (the typed values of ``referee.match.results``, importable from here too), the bots
and their sandbox, the referee's times, and what else the referee or the league kept (refused
streams, each decision's time, bots' log tails) as it is. The referee builds one as it plays and
writes its ``to_dict()``; ``from_dict`` reads it back with every field checked.
Three questions are asked of it:

- ``verify()``: does every game replay from its seed and actions to the events and result it
  states, and do the result's deals agree with the games' ``DealEnded`` events?
- ``summary()``: per deal the dealer, attackers, attackers' points and levels before and after;
  per team the net level gain and the match score. That summary is what standings are made of.
- ``seat_view(seat)``: what one seat was shown, event by event.

Reading a file never replays it: ``verify()`` does. A bare game record
(``shengji-arena/record/1``) reads as a match of that one game.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

from referee.match.results import (WRAP_GAP, DealFold, DealResult, DealSummary,  # noqa: F401
                                   Fault, Forfeit, MatchResult, MatchSummary, expect, field_of,
                                   fold_deals, is_int, object_of)
from referee.match.spec import TimeControl
from referee.rules.events import DealEnded, Event
from referee.rules.record import FORMAT as GAME_FORMAT
from referee.rules.record import MatchRecord, RecordError, rules_of  # noqa: F401
from referee.rules.record import verify as verify_game

MATCH_FORMAT = "shengji-arena/match/1"


def _shown_to(visible_to: Any, seat: int) -> bool:
    """Whether an event recorded with ``visible_to`` ("all", a seat, a list of seats) was shown
    to ``seat``."""
    return visible_to == "all" or visible_to == seat or (isinstance(visible_to, list)
                                                         and seat in visible_to)


KEPT_BEFORE_RESULT = ("refused_streams", "refused_streams_more", "timings")
"""What the referee keeps of how the match ran, as it is (in ``extra``: the streams it refused,
each decision's time), written between the faults and the result."""
_MATCH_FIELDS = frozenset(("format", "match_id", "variant", "options", "rules", "seats",
                           "time_control", "games", "faults", "result", "bots", "sandbox",
                           "sandbox_limits", "elapsed_s", "play_s", "engine"))


def _is_seconds(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True)
class DecisionTimes:
    """One seat's decision times in a match (milliseconds, as the referee charged them):
    how many, their median, the 95th percentile (nearest rank) and the longest."""

    seat: int
    decisions: int
    median_ms: float
    p95_ms: float
    max_ms: float


def nearest_rank(ordered: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of a sorted, non-empty list."""
    return ordered[max(0, min(len(ordered), math.ceil(len(ordered) * q)) - 1)]


@dataclass
class MatchFile:
    """One match's record; see the module docstring."""

    match_id: str
    variant: str
    options: dict[str, Any]
    rules: dict[str, Any]            # the full rule set played (``RuleSet.to_dict()``)
    seats: tuple[str, str, str, str]
    time_control: TimeControl
    games: list[MatchRecord]
    faults: list[Fault] = field(default_factory=list)
    result: MatchResult | None = None  # None only for a bare game record
    bots: tuple[str | None, ...] | None = None  # each seat's bot (its label), None: from elsewhere
    sandbox: str | None = None       # "bubblewrap" or "none"
    sandbox_limits: dict[str, Any] | None = None  # the seats' sandbox policy, when sandboxed
    elapsed_s: float | None = None   # the referee's time for the whole match, start-up included
    play_s: float | None = None      # its time from the first Welcome to the end
    engine: str | None = None        # the referee's rules engine: "compiled" or "pure"
    extra: dict[str, Any] = field(default_factory=dict)  # timings, refused streams, bot logs, ...

    # -- reading -----------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Any, where: str = "match record") -> "MatchFile":
        """The match ``data`` describes (``where``, a file or a match id, starts every error)."""
        data = object_of(where, data)
        fmt = data.get("format")
        if fmt == GAME_FORMAT:
            return cls._of_game(MatchRecord.from_dict(data, where), where)
        expect(fmt == MATCH_FORMAT, where, "format", fmt,
               f"{MATCH_FORMAT!r} (or a game record, {GAME_FORMAT!r})")
        games = field_of(data, where, "games", lambda v: isinstance(v, list),
                         "a list of game records (none when a seat never connected)")
        faults = field_of(data, where, "faults", lambda v: isinstance(v, list),
                          "a list of faults", [])
        variant = field_of(data, where, "variant", lambda v: isinstance(v, str), "a variant id")
        options = field_of(data, where, "options", lambda v: isinstance(v, dict),
                           "an object of rule options", {})
        rules_of(variant, options, where)
        bots = field_of(data, where, "bots", lambda v: isinstance(v, list) and len(v) == 4 and all(
            b is None or isinstance(b, str) for b in v), "four bots' labels (null: a seat "
            "played from elsewhere)", None)
        return cls(
            match_id=field_of(data, where, "match_id", lambda v: isinstance(v, str),
                              "a match id"),
            variant=variant,
            options=options,
            rules=field_of(data, where, "rules", lambda v: isinstance(v, dict), "the rule set",
                           {}),
            seats=tuple(field_of(data, where, "seats", lambda v: isinstance(v, (list, tuple))
                                 and len(v) == 4 and all(isinstance(x, str) for x in v),
                                 "four seat names", ("",) * 4)),
            time_control=TimeControl.from_dict(data.get("time_control"),
                                               f"{where}: time_control"),
            games=[MatchRecord.from_dict(g, f"{where}: games[{i}]") for i, g in enumerate(games)],
            faults=[Fault.from_dict(f, f"{where}: faults[{i}]") for i, f in enumerate(faults)],
            result=MatchResult.from_dict(
                field_of(data, where, "result", lambda v: isinstance(v, dict),
                         "the match's result, an object"), f"{where}: result"),
            bots=None if bots is None else tuple(bots),
            sandbox=field_of(data, where, "sandbox", lambda v: v in ("bubblewrap", "none"),
                             '"bubblewrap" or "none"', None),
            sandbox_limits=field_of(data, where, "sandbox_limits",
                                    lambda v: isinstance(v, dict), "the sandbox's limits, an "
                                    "object", None),
            elapsed_s=field_of(data, where, "elapsed_s", _is_seconds, "seconds", None),
            play_s=field_of(data, where, "play_s", _is_seconds, "seconds", None),
            engine=field_of(data, where, "engine", lambda v: v in ("compiled", "pure"),
                            '"compiled" or "pure"', None),
            extra={k: v for k, v in data.items() if k not in _MATCH_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        """The match file's plain-data form, key for key as the referee writes it (what
        ``from_dict`` reads back equal)."""
        extra = self.extra
        out: dict[str, Any] = {
            "format": MATCH_FORMAT, "match_id": self.match_id, "variant": self.variant,
            "options": self.options, "rules": self.rules, "seats": list(self.seats),
            "time_control": self.time_control.to_dict(),
            "games": [g.to_dict() for g in self.games],
            "faults": [f.to_dict() for f in self.faults]}
        for name in KEPT_BEFORE_RESULT:
            if name in extra:
                out[name] = extra[name]
        out["result"] = None if self.result is None else self.result.to_dict()
        if self.bots is not None:
            out["bots"] = list(self.bots)
        for name in ("sandbox", "sandbox_limits", "elapsed_s", "play_s", "engine"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        out.update((k, v) for k, v in extra.items() if k not in KEPT_BEFORE_RESULT)
        return out

    @classmethod
    def _of_game(cls, game: MatchRecord, where: str) -> "MatchFile":
        rules = rules_of(game.variant, game.options, where).to_dict()
        return cls(where, game.variant, game.options, rules, ("",) * 4, TimeControl(), [game])

    @classmethod
    def load(cls, path: str | Path) -> "MatchFile":
        """Read a match file (JSON); a file that is not one raises ``RecordError`` naming it
        (and the field)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RecordError(f"{path}: no such file") from None
        except OSError as e:
            raise RecordError(f"{path}: cannot be read: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise RecordError(f"{path}: not UTF-8 text: byte {e.start}") from None
        except json.JSONDecodeError as e:
            raise RecordError(f"{path}: not valid JSON: line {e.lineno} column {e.colno}: "
                              f"{e.msg}") from None
        return cls.from_dict(data, str(path))

    # -- what it says --------------------------------------------------------------------------
    @cached_property
    def _events(self) -> list[list[Event]]:
        """Every game's events, typed (read once)."""
        out = []
        for g, game in enumerate(self.games):
            events = []
            for i, e in enumerate(game.events):
                try:
                    events.append(Event.from_dict(e))
                except ValueError as err:
                    raise ValueError(f"match {self.match_id}: game {g}: event {i}: {err}") from None
            out.append(events)
        return out

    def deals_ended(self) -> Iterator[tuple[int, DealEnded]]:
        """(game, its ``DealEnded`` event) for every deal settled in the match, in order."""
        for g, events in enumerate(self._events):
            for e in events:
                if isinstance(e, DealEnded):
                    yield g, e

    def decision_times(self) -> list[DecisionTimes]:
        """Each seat's decision times, from the record's ``timings`` (one ``[seat, ms]`` pair
        per decision, in the order they were made), seats without a decision left out; a
        malformed ``timings`` raises ``RecordError`` naming it."""
        timings = self.extra.get("timings", [])
        where = f"{self.match_id}: timings"
        expect(isinstance(timings, list), where, "timings", timings,
               "a list of [seat, milliseconds] pairs")
        by_seat: dict[int, list[float]] = {}
        for i, pair in enumerate(timings):
            expect(isinstance(pair, list) and len(pair) == 2 and is_int(pair[0])
                   and 0 <= pair[0] < 4 and isinstance(pair[1], (int, float))
                   and not isinstance(pair[1], bool) and pair[1] >= 0, where, f"timings[{i}]",
                   pair, "[seat 0-3, milliseconds >= 0]")
            by_seat.setdefault(pair[0], []).append(float(pair[1]))
        out = []
        for seat in sorted(by_seat):
            ms = sorted(by_seat[seat])
            out.append(DecisionTimes(seat, len(ms), nearest_rank(ms, 0.5), nearest_rank(ms, 0.95),
                                     ms[-1]))
        return out

    def verify(self) -> list[str]:
        """What does not hold (empty: the match verifies): each game replayed from its seed and
        actions gives the events and result it states ("game I: ..."; only the last game of a
        forfeited match may have no result), and the result's deals are the games'
        ``DealEnded`` events ("result: ...")."""
        problems = []
        forfeited = self.result is not None and self.result.forfeit is not None
        for i, game in enumerate(self.games):
            try:
                found = verify_game(game)
            except ValueError as e:  # an action that cannot be applied
                found = [str(e)]
            cut_short = forfeited and i == len(self.games) - 1
            if not game.result and not cut_short and not any(
                    p.startswith("result: missing") for p in found):
                found.append("result: missing: the record states no result, and no forfeit "
                             "cut the game short")
            problems += [f"game {i}: {p}" for p in found]
        if problems or self.result is None:
            return problems
        settled = tuple(DealResult.of(g, e) for g, e in self.deals_ended())
        if settled != self.result.deals:
            first = next((i for i, (a, b) in enumerate(zip(settled, self.result.deals))
                          if a != b), min(len(settled), len(self.result.deals)))
            problems.append(f"result: deals[{first}]: the result says "
                            f"{_at(self.result.deals, first)}, the games' events "
                            f"{_at(settled, first)}")
        return problems

    def summary(self) -> MatchSummary:
        """The match as the standings count it (see ``MatchSummary``), from the games' typed
        events and the result."""
        wraps = self.rules.get("after_ace") == "wrap"
        deals: list[DealSummary] = []
        seat_points = None
        for game, events in zip(self.games, self._events):
            deals += fold_deals(events, wraps)
            points = game.result.get("match_points")
            if points:
                seat_points = [a + b for a, b in zip(seat_points or [0] * 4, points)]
        net0 = sum(d.gain[0] - d.gain[1] for d in deals)
        forfeit = self.result.forfeit if self.result else None
        if forfeit:
            score = (0.0, 1.0) if forfeit.team == 0 else (1.0, 0.0)
        else:
            score = (1.0, 0.0) if net0 > 0 else (0.0, 1.0) if net0 < 0 else (0.5, 0.5)
        return MatchSummary(tuple(deals), (net0, -net0), score,
                            forfeit.team if forfeit else None,
                            self.result.strikes if self.result else None, len(self.faults),
                            None if seat_points is None else tuple(seat_points), self.seats)

    def outcome(self) -> str:
        """The match's result in a line, as the standings count it: who wins (the score),
        then why (a forfeit, the game's winner, the net level gain), the levels after a
        single game and, where kept, the seats' match points and strikes."""
        summary = self.summary()
        last = self.games[-1].result if self.games else {}
        s0, s1 = summary.score
        team = 0 if s0 > s1 else 1
        names = f" ({self.seats[team]} and {self.seats[team + 2]})" if all(self.seats) else ""
        verdict = "a draw" if s0 == s1 else f"team {team}{names} wins"
        why = []
        forfeit = self.result.forfeit if self.result else None
        winner = self.result.winner_team if self.result else last.get("winner_team")
        if forfeit is not None:
            why.append(f"team {forfeit.team} forfeits (seat {forfeit.seat}: {forfeit.reason})")
        elif winner is not None:
            why.append(f"team {winner} won the game")
        why.append(f"net levels {summary.net[0]:+d} / {summary.net[1]:+d}")
        levels = (self.result.levels if self.result else None) or last.get("levels")
        if levels and len(self.games) == 1:  # a deal list's games each start where told
            why.append(f"levels after the last game {levels[0]} / {levels[1]}")
        if summary.match_points is not None:
            why.append("match points " + " ".join(map(str, summary.match_points)))
        if summary.strikes is not None and any(summary.strikes):
            why.append("strikes " + " ".join(map(str, summary.strikes)))
        return f"{verdict} (score {s0:g} : {s1:g}): {'; '.join(why)}"

    def events(self, seat: int | None = None) -> list[Event]:
        """Every event of every game, typed, in order; with ``seat``, only those it was shown
        (the public ones and those private to it)."""
        if seat is not None and not (is_int(seat) and 0 <= seat < 4):
            raise ValueError(f"seat {seat!r}: expected a seat 0-3")
        every = [e for events in self._events for e in events]
        return every if seat is None else [e for e in every if e.visible(seat)]

    def seat_view(self, seat: int) -> list[dict[str, Any]]:
        """Every event ``seat`` was shown, game after game, as the record keeps it (without
        ``visible_to``): the public ones and those private to it, never another seat's."""
        if not (is_int(seat) and 0 <= seat < 4):
            raise ValueError(f"seat {seat!r}: expected a seat 0-3")
        return [{k: v for k, v in e.items() if k != "visible_to"}
                for game in self.games for e in game.events
                if _shown_to(e.get("visible_to"), seat)]


def _at(items: tuple, i: int) -> Any:
    return items[i] if i < len(items) else "nothing"
