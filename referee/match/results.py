"""What a match came to, as typed values: the faults charged or noted, each settled deal's
result, the result the referee announces at the match's end (``MatchEnd.result_json``), and the
summary the standings count (per deal, per team).

Each value reads from its plain-data form with every field checked (``RecordError`` naming the
field that is wrong) and writes back to it (``to_dict``), key for key as the referee writes it.
``DealFold`` folds a game's events into the summary of each deal they settle: the one place that
does.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from typing import Any, Iterable, TypeVar

from referee.rules.cards import RANK_TEXT
from referee.rules.events import DealEnded, DealerSet, DealStarted
from referee.rules.record import RecordError, short

WRAP_GAP = 7  # levels: a drop this long or longer is a wrap past A (a gain), not a reset

_T = TypeVar("_T")


def per_team(values: Iterable[_T]) -> tuple[_T, _T]:
    """``values`` as a pair, team 0 first (ValueError unless there are two)."""
    a, b = values
    return a, b


def per_seat(values: Iterable[_T]) -> tuple[_T, _T, _T, _T]:
    """``values`` as four, seat 0 first (ValueError unless there are four)."""
    a, b, c, d = values
    return a, b, c, d


# -- checked reading ---------------------------------------------------------------------------
def expect(ok: bool, where: str, name: str, value: Any, expected: str) -> None:
    """Raise ``RecordError`` saying field ``name`` is not ``expected`` unless ``ok``."""
    if not ok:
        raise _wrong(where, name, value, expected)


def _wrong(where: str, name: str, value: Any, expected: str) -> RecordError:
    return RecordError(f"{where}: field {name!r} = {short(value)}: expected {expected}")


def field_of(data: dict, where: str, name: str, check, expected: str, default: Any = ...) -> Any:
    """``data[name]`` when ``check`` accepts it; a missing field takes ``default`` (none given:
    it is required)."""
    if name not in data:
        if default is ...:
            raise RecordError(f"{where}: missing field {name!r} ({expected})")
        return default
    expect(check(data[name]), where, name, data[name], expected)
    return data[name]


def object_of(where: str, data: Any, known=None) -> dict:
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


def is_int(v: Any) -> bool:
    return type(v) is int or (isinstance(v, int) and not isinstance(v, bool))


def is_opt_int(v: Any) -> bool:
    return v is None or type(v) is int or (isinstance(v, int) and not isinstance(v, bool))


def ints(n: int | None = None):
    """A check: a list of ``n`` integers (any number without ``n``)."""
    return lambda v: isinstance(v, list) and all(is_int(x) for x in v) and (n is None
                                                                             or len(v) == n)


def is_ranks(v: Any) -> bool:
    """Two teams' levels as rank text, such as ``["2", "A"]``."""
    return isinstance(v, list) and len(v) == 2 and v[0] in RANK_TEXT and v[1] in RANK_TEXT


def _opt_tuple(v: Any) -> tuple | None:
    return None if v is None else tuple(v)


# -- faults, deals and the result --------------------------------------------------------------
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
        data = object_of(where, data, cls)
        return cls(field_of(data, where, "seat", lambda v: is_int(v) and 0 <= v < 4,
                            "a seat 0-3"),
                   field_of(data, where, "kind", lambda v: isinstance(v, str), "a fault kind"),
                   field_of(data, where, "reason", lambda v: isinstance(v, str), "a string"),
                   field_of(data, where, "strikes", is_int, "a count"),
                   field_of(data, where, "game", is_opt_int, "a game index", None),
                   field_of(data, where, "action", is_opt_int, "an action index", None),
                   field_of(data, where, "request_id", is_opt_int, "a request id", None),
                   field_of(data, where, "default_action", lambda v: isinstance(v, str),
                            "an action's text", None),
                   field_of(data, where, "exit_status", is_opt_int,
                            "the process's exit status (minus a signal)", None),
                   field_of(data, where, "log_tail", lambda v: v is None or isinstance(v, str),
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
        data = object_of(where, data, cls)
        return cls(field_of(data, where, "seat", lambda v: is_int(v) and 0 <= v < 4,
                            "a seat 0-3"),
                   field_of(data, where, "team", lambda v: v in (0, 1), "a team, 0 or 1"),
                   field_of(data, where, "reason", lambda v: isinstance(v, str), "a string"))


@dataclass(frozen=True)
class DealResult:
    """One settled deal as the referee announced it: the game of the match it was in, its
    number there, the attackers' total and the levels after it."""

    game: int
    deal: int
    attacker_total: int
    levels: tuple[str, str]

    @classmethod
    def of(cls, game: int, ended: DealEnded) -> "DealResult":
        """The result a game's ``DealEnded`` event announces."""
        return cls(game, ended.deal, ended.attacker_total,
                   per_team(RANK_TEXT[x] for x in ended.levels))

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "deal": self.deal, "attacker_total": self.attacker_total,
                "levels": list(self.levels)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "deal") -> "DealResult":
        data = object_of(where, data, cls)
        return cls(field_of(data, where, "game", is_int, "a game index"),
                   field_of(data, where, "deal", is_int, "a deal number"),
                   field_of(data, where, "attacker_total", is_int, "the attackers' points"),
                   tuple(field_of(data, where, "levels", is_ranks,
                                  "two ranks such as [\"2\", \"4\"]")))


@dataclass(frozen=True)
class MatchResult:
    """What the referee announced at the match's end (``MatchEnd.result_json``); ``sandbox``
    is added to the record's copy once the match is over."""

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
        data = object_of(where, data, cls)
        deals = field_of(data, where, "deals", lambda v: isinstance(v, list), "a list of deals")
        forfeit = field_of(data, where, "forfeit", lambda v: v is None or isinstance(v, dict),
                           "null or the forfeit", None)
        mp = field_of(data, where, "match_points", ints(4), "four seats' match points", None)
        titles = field_of(data, where, "titles", lambda v: isinstance(v, list) and len(v) == 4,
                          "four seats' titles", None)
        levels = field_of(data, where, "levels", is_ranks, "two ranks", None)
        return cls(field_of(data, where, "match_id", lambda v: isinstance(v, str), "a match id"),
                   field_of(data, where, "variant", lambda v: isinstance(v, str),
                            "a variant id"),
                   field_of(data, where, "winner_team", lambda v: v in (None, 0, 1),
                            "0, 1 or null"),
                   tuple(field_of(data, where, "strikes", ints(4), "four seats' strikes")),
                   None if forfeit is None else Forfeit.from_dict(forfeit, f"{where}: forfeit"),
                   tuple(DealResult.from_dict(d, f"{where}: deals[{i}]")
                         for i, d in enumerate(deals)),
                   _opt_tuple(levels), _opt_tuple(mp), _opt_tuple(titles),
                   field_of(data, where, "sandbox", lambda v: v in ("bubblewrap", "none"),
                            '"bubblewrap" or "none"', None),
                   _opt_tuple(field_of(data, where, "scores", ints(4), "four seats' scores",
                                       None)))

    def to_dict(self) -> dict[str, Any]:
        """The plain-data form, its keys in the order the referee writes them."""
        out: dict[str, Any] = {
            "match_id": self.match_id, "variant": self.variant,
            "deals": [d.to_dict() for d in self.deals], "strikes": list(self.strikes),
            "forfeit": None if self.forfeit is None else self.forfeit.to_dict(),
            "winner_team": self.winner_team}
        if self.scores is not None:
            out["scores"] = list(self.scores)
        if self.levels is not None:
            out["levels"] = list(self.levels)
        if self.match_points is not None:
            out["match_points"] = list(self.match_points)
        if self.titles is not None:
            out["titles"] = list(self.titles)
        if self.sandbox is not None:
            out["sandbox"] = self.sandbox
        return out


# -- the standings' summary --------------------------------------------------------------------
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
        gain = per_team(a - b + (len(RANK_TEXT) if wraps and b - a >= WRAP_GAP else 0)
                        for a, b in zip(ended.levels, started.levels))
        return cls(dealer, None if dealer is None else 1 - dealer % 2, ended.attacker_total,
                   per_team(RANK_TEXT[x] for x in started.levels),
                   per_team(RANK_TEXT[x] for x in ended.levels), gain)

    def to_dict(self) -> dict[str, Any]:
        return {"dealer": self.dealer, "attackers": self.attackers,
                "attacker_total": self.attacker_total, "before": list(self.before),
                "after": list(self.after), "gain": list(self.gain)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "deal") -> "DealSummary":
        """The stored form read back; RecordError naming the field that is wrong."""
        return _deal_summary(data, where, None)


def _is_pair(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and is_int(v[0]) and is_int(v[1])


def _is_attackers(v: Any) -> bool:
    return v in (None, 0, 1)


_DEAL_CHECKS = (("dealer", is_opt_int, "a seat or null"),
                ("attackers", _is_attackers, "0, 1 or null"),
                ("attacker_total", is_int, "the attackers' points"),
                ("before", is_ranks, "two ranks"),
                ("after", is_ranks, "two ranks"),
                ("gain", _is_pair, "two teams' level gains"))
"""A stored deal's fields, in order, each with its check and what it expects."""
_DEAL_KEYS = frozenset(name for name, _, _ in _DEAL_CHECKS)


def _deal_summary(d: Any, where: str, index: int | None) -> DealSummary:
    """``DealSummary.from_dict``; ``index``: the deal's place in a summary's ``deals`` (its
    errors then say ``WHERE: deals[INDEX]``). A deal as the referee stores it is taken at a
    glance (the standings read stored summaries by the ten thousand); any other is read field
    by field against ``_DEAL_CHECKS``, which say what is accepted and, else, which field is
    wrong."""
    if type(d) is dict and d.keys() == _DEAL_KEYS:
        dealer, attackers, total = d["dealer"], d["attackers"], d["attacker_total"]
        before, after, gain = d["before"], d["after"], d["gain"]
        if ((dealer is None or type(dealer) is int) and attackers in (None, 0, 1)
                and type(total) is int and type(before) is list and len(before) == 2
                and before[0] in RANK_TEXT and before[1] in RANK_TEXT and type(after) is list
                and len(after) == 2 and after[0] in RANK_TEXT and after[1] in RANK_TEXT
                and type(gain) is list and len(gain) == 2 and type(gain[0]) is int
                and type(gain[1]) is int):
            return DealSummary(dealer, attackers, total, tuple(before), tuple(after),
                               tuple(gain))
    where = where if index is None else f"{where}: deals[{index}]"
    d = object_of(where, d, DealSummary)
    dealer, attackers, total, before, after, gain = (
        field_of(d, where, name, check, expected) for name, check, expected in _DEAL_CHECKS)
    return DealSummary(dealer, attackers, total, tuple(before), tuple(after), tuple(gain))


def _is_four_or_none(v: Any) -> bool:
    return v is None or (isinstance(v, list) and len(v) == 4 and all(is_int(x) for x in v))


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
        """The stored form read back, every field checked in one pass; RecordError naming the
        field that is wrong."""
        if not (type(data) is dict and data.keys() <= _SUMMARY_KEYS):
            data = object_of(where, data, cls)
        if "deals" not in data:
            raise RecordError(f"{where}: missing field 'deals' (a list of deals)")
        deals = data["deals"]
        if not isinstance(deals, list):
            raise _wrong(where, "deals", deals, "a list of deals")
        strikes = data.get("strikes")
        if not _is_four_or_none(strikes):
            raise _wrong(where, "strikes", strikes, "four seats' strikes or null")
        mp = data.get("match_points")
        if not _is_four_or_none(mp):
            raise _wrong(where, "match_points", mp, "four seats' match points or null")
        seats = data.get("seats")
        if not (seats is None or isinstance(seats, list)):
            raise _wrong(where, "seats", seats, "four seat names or null")
        read = tuple([_deal_summary(d, where, i) for i, d in enumerate(deals)])
        net = field_of(data, where, "net", _is_pair, "two teams' net level gains")
        score = field_of(data, where, "score", _is_two, "two teams' scores")
        forfeit = data.get("forfeit_team")
        if forfeit not in (None, 0, 1):
            raise _wrong(where, "forfeit_team", forfeit, "0, 1 or null")
        faults = data.get("faults", 0)
        if not is_int(faults):
            raise _wrong(where, "faults", faults, "a count")
        return cls(read, tuple(net), tuple(score), forfeit, _opt_tuple(strikes), faults,
                   _opt_tuple(mp), _opt_tuple(seats))


_SUMMARY_KEYS = frozenset(f.name for f in fields(MatchSummary))


def _is_two(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2


# -- the deal fold ----------------------------------------------------------------------------
class DealFold:
    """A game's events folded, as they come, into the summary of each deal they settle: the
    deal's start, its dealer as declarations move it, and its end (``DealSummary``).
    ``wraps``: levels go on past A (the rule set's ``after_ace`` is ``wrap``)."""

    __slots__ = ("wraps", "deals", "_started", "_dealer")

    def __init__(self, wraps: bool) -> None:
        self.wraps = wraps
        self.deals: list[DealSummary] = []
        self._started: DealStarted | None = None
        self._dealer: int | None = None

    def see(self, event) -> DealSummary | None:
        """Take the next event; at a deal's end, its summary (also added to ``deals``)."""
        cls = type(event)
        if cls is DealStarted:
            self._started, self._dealer = event, event.dealer
        elif cls is DealerSet:
            self._dealer = event.seat  # declared, overturned or set by the rules mid-deal
        elif cls is DealEnded and self._started is not None:
            deal = DealSummary.of(self._started, self._dealer, event, self.wraps)
            self.deals.append(deal)
            self._started = None
            return deal
        return None


def fold_deals(events: Iterable, wraps: bool) -> list[DealSummary]:
    """The summary of every deal one game's ``events`` settle, in order (``DealFold``)."""
    fold = DealFold(wraps)
    for e in events:
        fold.see(e)
    return fold.deals
