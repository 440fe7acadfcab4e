"""The match file: the record the referee writes of one match (``shengji-arena/match/1``), read
back as typed values.

It holds the rules played, the seats, the time control, every engine game of the match (a
``MatchRecord`` each: a deal-list match has one game per deal), the faults charged or noted, the
result, and what else the referee kept (timings, refused streams, bots' log tails) as it is.
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
from dataclasses import dataclass, field, fields
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Iterator

from referee.match.spec import TimeControl
from referee.rules.cards import RANK_TEXT
from referee.rules.events import DealEnded, DealerSet, DealStarted, Event
from referee.rules.record import FORMAT as GAME_FORMAT
from referee.rules.record import MatchRecord, RecordError, rules_of, short
from referee.rules.record import verify as verify_game

MATCH_FORMAT = "shengji-arena/match/1"
WRAP_GAP = 7  # levels: a drop this long or longer is a wrap past A (a gain), not a reset


def _expect(ok: bool, where: str, name: str, value: Any, expected: str) -> None:
    if not ok:
        raise RecordError(f"{where}: field {name!r} = {short(value)}: expected {expected}")


def _get(data: dict, where: str, name: str, check, expected: str, default: Any = ...) -> Any:
    """``data[name]`` when ``check`` accepts it; a missing field takes ``default`` (none given:
    it is required)."""
    if name not in data:
        if default is ...:
            raise RecordError(f"{where}: missing field {name!r} ({expected})")
        return default
    _expect(check(data[name]), where, name, data[name], expected)
    return data[name]


def _is_object(where: str, data: Any, known=None) -> dict:
    """``data`` as a dict; with ``known`` (a dataclass), only with that type's fields."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected a JSON object, got {type(data).__name__}: "
                          f"{short(data)}")
    if known is not None and not data.keys() <= _field_names(known):
        names = [f.name for f in fields(known)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise RecordError(f"{where}: unknown field(s) {unknown}; expected "
                              f"{', '.join(names)}")
    return data


@cache
def _field_names(known: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(known))


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _opt_int(v: Any) -> bool:
    return v is None or _int(v)


def _ints(n: int | None = None):
    return lambda v: isinstance(v, list) and all(_int(x) for x in v) and (n is None or len(v) == n)


def _ranks(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(x in RANK_TEXT for x in v)


def _shown_to(visible_to: Any, seat: int) -> bool:
    """Whether an event recorded with ``visible_to`` ("all", a seat, a list of seats) was shown
    to ``seat``."""
    return visible_to == "all" or visible_to == seat or (isinstance(visible_to, list)
                                                         and seat in visible_to)


@dataclass(frozen=True)
class Fault:
    """A fault of one seat: charged with a strike, or only noted (a reconnection, a seat that
    never connected); where in the match it happened, the move played for the seat and, for a
    seat whose process ended, its exit status and the end of its log."""

    seat: int
    kind: str              # timeout, garbage, illegal, flood, disconnect, reconnect, ...
    reason: str
    strikes: int           # the seat's strikes after it
    game: int | None = None
    action: int | None = None
    request_id: int | None = None
    default_action: str | None = None
    exit_status: int | None = None
    log_tail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None or f.default is not None}

    @classmethod
    def from_dict(cls, data: Any, where: str = "fault") -> "Fault":
        data = _is_object(where, data, cls)
        return cls(_get(data, where, "seat", lambda v: _int(v) and 0 <= v < 4, "a seat 0-3"),
                   _get(data, where, "kind", lambda v: isinstance(v, str), "a fault kind"),
                   _get(data, where, "reason", lambda v: isinstance(v, str), "a string"),
                   _get(data, where, "strikes", _int, "a count"),
                   _get(data, where, "game", _opt_int, "a game index", None),
                   _get(data, where, "action", _opt_int, "an action index", None),
                   _get(data, where, "request_id", _opt_int, "a request id", None),
                   _get(data, where, "default_action", lambda v: isinstance(v, str),
                        "an action's text", None),
                   _get(data, where, "exit_status", _opt_int,
                        "the process's exit status (minus a signal)", None),
                   _get(data, where, "log_tail", lambda v: v is None or isinstance(v, str),
                        "the end of the seat's log", None))


@dataclass(frozen=True)
class Forfeit:
    """The seat whose fault ended the match; its team loses."""

    seat: int
    team: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "team": self.team, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Any, where: str = "forfeit") -> "Forfeit":
        data = _is_object(where, data, cls)
        return cls(_get(data, where, "seat", lambda v: _int(v) and 0 <= v < 4, "a seat 0-3"),
                   _get(data, where, "team", lambda v: v in (0, 1), "a team, 0 or 1"),
                   _get(data, where, "reason", lambda v: isinstance(v, str), "a string"))


@dataclass(frozen=True)
class DealResult:
    """One settled deal as the referee announced it: the game of the match it was in, its
    number there, the attackers' total and the levels after it."""

    game: int
    deal: int
    attacker_total: int
    levels: tuple[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "deal": self.deal, "attacker_total": self.attacker_total,
                "levels": list(self.levels)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "deal") -> "DealResult":
        data = _is_object(where, data, cls)
        return cls(_get(data, where, "game", _int, "a game index"),
                   _get(data, where, "deal", _int, "a deal number"),
                   _get(data, where, "attacker_total", _int, "the attackers' points"),
                   tuple(_get(data, where, "levels", _ranks, "two ranks such as [\"2\", \"4\"]")))


@dataclass(frozen=True)
class MatchResult:
    """What the referee announced at the match's end (``MatchEnd.result_json``)."""

    match_id: str
    variant: str
    winner_team: int | None
    strikes: tuple[int, int, int, int]
    forfeit: Forfeit | None
    deals: tuple[DealResult, ...]
    levels: tuple[str, str] | None = None                  # after the last game
    match_points: tuple[int, int, int, int] | None = None  # three-deck (积分), per seat
    titles: tuple[str, str, str, str] | None = None
    sandbox: str | None = None                             # "bubblewrap" or "none"
    scores: tuple[int, int, int, int] | None = None        # a single-deal game (Botzone), per seat

    @classmethod
    def from_dict(cls, data: Any, where: str = "result") -> "MatchResult":
        data = _is_object(where, data, cls)
        deals = _get(data, where, "deals", lambda v: isinstance(v, list), "a list of deals")
        forfeit = _get(data, where, "forfeit", lambda v: v is None or isinstance(v, dict),
                       "null or the forfeit", None)
        mp = _get(data, where, "match_points", _ints(4), "four seats' match points", None)
        titles = _get(data, where, "titles", lambda v: isinstance(v, list) and len(v) == 4,
                      "four seats' titles", None)
        levels = _get(data, where, "levels", _ranks, "two ranks", None)
        return cls(_get(data, where, "match_id", lambda v: isinstance(v, str), "a match id"),
                   _get(data, where, "variant", lambda v: isinstance(v, str), "a variant id"),
                   _get(data, where, "winner_team", lambda v: v in (None, 0, 1),
                        "0, 1 or null"),
                   tuple(_get(data, where, "strikes", _ints(4), "four seats' strikes")),
                   None if forfeit is None else Forfeit.from_dict(forfeit, f"{where}: forfeit"),
                   tuple(DealResult.from_dict(d, f"{where}: deals[{i}]")
                         for i, d in enumerate(deals)),
                   None if levels is None else tuple(levels),
                   None if mp is None else tuple(mp),
                   None if titles is None else tuple(titles),
                   _get(data, where, "sandbox", lambda v: v in ("bubblewrap", "none"),
                        '"bubblewrap" or "none"', None),
                   _opt_tuple(_get(data, where, "scores", _ints(4), "four seats' scores", None)))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "match_id": self.match_id, "variant": self.variant,
            "deals": [d.to_dict() for d in self.deals], "strikes": list(self.strikes),
            "forfeit": None if self.forfeit is None else self.forfeit.to_dict(),
            "winner_team": self.winner_team}
        if self.levels is not None:
            out["levels"] = list(self.levels)
        if self.match_points is not None:
            out["match_points"] = list(self.match_points)
        if self.titles is not None:
            out["titles"] = list(self.titles)
        if self.sandbox is not None:
            out["sandbox"] = self.sandbox
        if self.scores is not None:
            out["scores"] = list(self.scores)
        return out


@dataclass(frozen=True)
class DealSummary:
    """One deal for the standings: the dealer when it ended (a declaration may have moved it)
    and so the attackers, their points, the levels before and after, and each team's gain."""

    dealer: int | None
    attackers: int | None
    attacker_total: int
    before: tuple[str, str]
    after: tuple[str, str]
    gain: tuple[int, int]

    @classmethod
    def of(cls, started: DealStarted, dealer: int | None, ended: DealEnded,
           wraps: bool) -> "DealSummary":
        """From the deal's first and last events; ``wraps``: levels go on past A (a long drop
        is then a gain), else a drop is a team sent back."""
        gain = tuple(a - b + (len(RANK_TEXT) if wraps and b - a >= WRAP_GAP else 0)
                     for a, b in zip(ended.levels, started.levels))
        return cls(dealer, None if dealer is None else 1 - dealer % 2, ended.attacker_total,
                   tuple(RANK_TEXT[x] for x in started.levels),
                   tuple(RANK_TEXT[x] for x in ended.levels), gain)

    def to_dict(self) -> dict[str, Any]:
        return {"dealer": self.dealer, "attackers": self.attackers,
                "attacker_total": self.attacker_total, "before": list(self.before),
                "after": list(self.after), "gain": list(self.gain)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "deal") -> "DealSummary":
        data = _is_object(where, data, cls)
        return cls(_get(data, where, "dealer", _opt_int, "a seat or null"),
                   _get(data, where, "attackers", lambda v: v in (None, 0, 1), "0, 1 or null"),
                   _get(data, where, "attacker_total", _int, "the attackers' points"),
                   tuple(_get(data, where, "before", _ranks, "two ranks")),
                   tuple(_get(data, where, "after", _ranks, "two ranks")),
                   tuple(_get(data, where, "gain", _ints(2), "two teams' level gains")))


@dataclass(frozen=True)
class MatchSummary:
    """A match as the standings count it: its deals, each team's net level gain and score (1 a
    win, 0.5 a draw, 0 a loss; a forfeit loses whatever the levels), strikes per seat, the
    number of faults and, in three-deck, the seats' match points summed over its games."""

    deals: tuple[DealSummary, ...]
    net: tuple[int, int]
    score: tuple[float, float]
    forfeit_team: int | None = None
    strikes: tuple[int, int, int, int] | None = None
    faults: int = 0
    match_points: tuple[int, int, int, int] | None = None
    seats: tuple[str, str, str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The stored form (``results.summary_json``)."""
        return {"seats": None if self.seats is None else list(self.seats),
                "deals": [d.to_dict() for d in self.deals], "net": list(self.net),
                "score": list(self.score), "forfeit_team": self.forfeit_team,
                "strikes": None if self.strikes is None else list(self.strikes),
                "faults": self.faults,
                "match_points": None if self.match_points is None else list(self.match_points)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "summary") -> "MatchSummary":
        """The stored form read back; RecordError naming the field that is wrong."""
        fast = _well_formed_summary(data)
        return fast if fast is not None else cls.checked(data, where)

    @classmethod
    def checked(cls, data: Any, where: str = "summary") -> "MatchSummary":
        """``from_dict`` field by field (the one-pass reading's reference)."""
        data = _is_object(where, data, cls)
        deals = _get(data, where, "deals", lambda v: isinstance(v, list), "a list of deals")
        strikes = _get(data, where, "strikes", lambda v: v is None or _ints(4)(v),
                       "four seats' strikes or null", None)
        mp = _get(data, where, "match_points", lambda v: v is None or _ints(4)(v),
                  "four seats' match points or null", None)
        seats = _get(data, where, "seats", lambda v: v is None or isinstance(v, list),
                     "four seat names or null", None)
        return cls(tuple(DealSummary.from_dict(d, f"{where}: deals[{i}]")
                         for i, d in enumerate(deals)),
                   tuple(_get(data, where, "net", _ints(2), "two teams' net level gains")),
                   tuple(_get(data, where, "score", lambda v: isinstance(v, list) and len(v) == 2,
                              "two teams' scores")),
                   _get(data, where, "forfeit_team", lambda v: v in (None, 0, 1),
                        "0, 1 or null", None),
                   None if strikes is None else tuple(strikes),
                   _get(data, where, "faults", _int, "a count", 0),
                   None if mp is None else tuple(mp),
                   None if seats is None else tuple(seats))


_SUMMARY_KEYS = frozenset({"deals", "net", "score", "forfeit_team", "strikes", "faults",
                           "match_points", "seats"})
_DEAL_KEYS = frozenset({"dealer", "attackers", "attacker_total", "before", "after", "gain"})


def _pair_of_ints(v: Any) -> bool:
    return type(v) is list and len(v) == 2 and type(v[0]) is int and type(v[1]) is int


def _four_ints_or_none(v: Any) -> bool:
    return v is None or (type(v) is list and len(v) == 4 and all(type(x) is int for x in v))


def _well_formed_summary(data: Any) -> MatchSummary | None:
    """``MatchSummary.from_dict`` of ``data`` that passes every one of its checks, in one pass
    (a large season's standings read its stored summaries by the ten thousand); None for
    anything else, which ``from_dict`` then checks field by field to say what is wrong."""
    if type(data) is not dict or not data.keys() <= _SUMMARY_KEYS:
        return None
    try:
        deals, net, score = data["deals"], data["net"], data["score"]
    except KeyError:
        return None
    forfeit, faults = data.get("forfeit_team"), data.get("faults", 0)
    strikes, mp, seats = data.get("strikes"), data.get("match_points"), data.get("seats")
    if not (type(deals) is list and _pair_of_ints(net) and type(score) is list
            and len(score) == 2 and forfeit in (None, 0, 1) and type(faults) is int
            and _four_ints_or_none(strikes) and _four_ints_or_none(mp)
            and (seats is None or type(seats) is list)):
        return None
    out = []
    for d in deals:
        if type(d) is not dict or d.keys() != _DEAL_KEYS:
            return None
        dealer, before, after = d["dealer"], d["before"], d["after"]
        if not ((dealer is None or type(dealer) is int) and d["attackers"] in (None, 0, 1)
                and type(d["attacker_total"]) is int and _pair_of_ints(d["gain"])
                and type(before) is list and len(before) == 2 and type(after) is list
                and len(after) == 2 and all(x in RANK_TEXT for x in before + after)):
            return None
        out.append(DealSummary(dealer, d["attackers"], d["attacker_total"], tuple(before),
                               tuple(after), tuple(d["gain"])))
    return MatchSummary(tuple(out), tuple(net), tuple(score), forfeit,
                        None if strikes is None else tuple(strikes), faults,
                        None if mp is None else tuple(mp), None if seats is None else tuple(seats))


_MATCH_FIELDS = ("format", "match_id", "variant", "options", "rules", "seats", "time_control",
                 "games", "faults", "result")


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
    extra: dict[str, Any] = field(default_factory=dict)  # timings, refused streams, bots, ...

    # -- reading -----------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Any, where: str = "match record") -> "MatchFile":
        """The match ``data`` describes (``where``, a file or a match id, starts every error)."""
        data = _is_object(where, data)
        fmt = data.get("format")
        if fmt == GAME_FORMAT:
            return cls._of_game(MatchRecord.from_dict(data, where), where)
        _expect(fmt == MATCH_FORMAT, where, "format", fmt,
                f"{MATCH_FORMAT!r} (or a game record, {GAME_FORMAT!r})")
        games = _get(data, where, "games", lambda v: isinstance(v, list),
                     "a list of game records (none when a seat never connected)")
        faults = _get(data, where, "faults", lambda v: isinstance(v, list), "a list of faults",
                      [])
        variant = _get(data, where, "variant", lambda v: isinstance(v, str), "a variant id")
        options = _get(data, where, "options", lambda v: isinstance(v, dict),
                       "an object of rule options", {})
        rules_of(variant, options, where)
        return cls(
            match_id=_get(data, where, "match_id", lambda v: isinstance(v, str), "a match id"),
            variant=variant,
            options=options,
            rules=_get(data, where, "rules", lambda v: isinstance(v, dict), "the rule set", {}),
            seats=tuple(_get(data, where, "seats", lambda v: isinstance(v, (list, tuple))
                             and len(v) == 4 and all(isinstance(x, str) for x in v),
                             "four seat names", ("",) * 4)),
            time_control=TimeControl.from_dict(data.get("time_control"),
                                               f"{where}: time_control"),
            games=[MatchRecord.from_dict(g, f"{where}: games[{i}]") for i, g in enumerate(games)],
            faults=[Fault.from_dict(f, f"{where}: faults[{i}]") for i, f in enumerate(faults)],
            result=MatchResult.from_dict(
                _get(data, where, "result", lambda v: isinstance(v, dict),
                     "the match's result, an object"), f"{where}: result"),
            extra={k: v for k, v in data.items() if k not in _MATCH_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        """The match file's plain-data form (what ``from_dict`` reads back equal)."""
        return {"format": MATCH_FORMAT, "match_id": self.match_id, "variant": self.variant,
                "options": self.options, "rules": self.rules, "seats": list(self.seats),
                "time_control": self.time_control.to_dict(),
                "games": [g.to_dict() for g in self.games],
                "faults": [f.to_dict() for f in self.faults],
                "result": None if self.result is None else self.result.to_dict(), **self.extra}

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
        settled = tuple(DealResult(g, e.deal, e.attacker_total,
                                   tuple(RANK_TEXT[x] for x in e.levels))
                        for g, e in self.deals_ended())
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
            started = dealer = None
            for e in events:
                if isinstance(e, DealStarted):
                    started, dealer = e, e.dealer
                elif isinstance(e, DealerSet):
                    dealer = e.seat  # declared, overturned or set by the rules mid-deal
                elif isinstance(e, DealEnded) and started is not None:
                    deals.append(DealSummary.of(started, dealer, e, wraps))
                    started = None
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

    def seat_view(self, seat: int) -> list[dict[str, Any]]:
        """Every event ``seat`` was shown, game after game, as the record keeps it (without
        ``visible_to``): the public ones and those private to it, never another seat's."""
        if not (_int(seat) and 0 <= seat < 4):
            raise ValueError(f"seat {seat!r}: expected a seat 0-3")
        return [{k: v for k, v in e.items() if k != "visible_to"}
                for game in self.games for e in game.events
                if _shown_to(e.get("visible_to"), seat)]


def _opt_tuple(v: Any) -> tuple | None:
    return None if v is None else tuple(v)


def _at(items: tuple, i: int) -> Any:
    return items[i] if i < len(items) else "nothing"
