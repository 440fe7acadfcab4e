"""The match spec: what the scheduler asks the referee to play (the contract across the process
boundary), with the one set of time-control and fault-policy defaults every caller uses.

Each type reads and writes its plain-data form (``to_dict`` / ``from_dict``); that form is what
the store keeps for a season's match and what the referee process (``referee.serve``) reads. A
field that cannot be used is a ``ValueError`` naming where it was read, the field and what was
expected.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from shengji_arena.v1 import referee_pb2 as pb

from referee.rules.cards import RANK_TEXT
from referee.seats.manifest import PLACED_FIELDS, Manifest


def _expect(ok: object, where: str, name: str, value: Any, expected: str) -> None:
    """Raise ``ValueError`` saying field ``name`` is not ``expected`` unless ``ok`` is true."""
    if not ok:
        raise ValueError(f"{where}: field {name!r} = {value!r}: expected {expected}")


def _object(data: Any, where: str, known: tuple[str, ...]) -> dict:
    """``data`` as a dict with only ``known`` fields."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object with fields {', '.join(known)}; "
                         f"got {type(data).__name__}")
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; expected {', '.join(known)}")
    return data


def _required(data: dict, where: str, name: str, expected: str) -> Any:
    if name not in data:
        raise ValueError(f"{where}: missing field {name!r} ({expected})")
    return data[name]


def _is_int(v: Any, least: int = 0) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= least


@dataclass(frozen=True)
class TimeControl:
    """The referee's clock and fault policy for one match."""

    per_decision_ms: int = 2000
    bank_ms: int = 10000
    max_strikes: int = 3
    reconnect_window_ms: int = 5000
    connect_timeout_ms: int = 15000
    max_reconnects: int = 10  # in the whole match; one more forfeits

    def to_pb(self):
        """The part a bot is told in its Welcome."""
        return pb.TimeControl(per_decision_ms=self.per_decision_ms, bank_ms=self.bank_ms,
                              max_strikes=self.max_strikes,
                              reconnect_window_ms=self.reconnect_window_ms,
                              max_reconnects=self.max_reconnects)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None, where: str = "time control") -> "TimeControl":
        """Fields left out take the defaults; each given one is a whole number (of
        milliseconds, or a count), at least 1 (``max_reconnects`` may be 0)."""
        names = tuple(f.name for f in fields(cls))
        data = _object({} if data is None else data, where, names)
        for name, v in data.items():
            least = 0 if name == "max_reconnects" else 1
            _expect(_is_int(v, least), where, name, v,
                    "a count, 0 or more" if least == 0 else
                    "a positive integer (milliseconds or a count)")
        return cls(**data)


DEFAULT_TIME_CONTROL = TimeControl()
"""The defaults of every match (season files, ``arena match``, the referee's own limits)."""


@dataclass(frozen=True)
class DealSpec:
    """One deal of a deal-list match: its seed, the teams' levels and the dealer it starts
    from (None: the rules find the dealer, as in a first deal)."""

    seed: str
    levels: tuple[str, str] = ("2", "2")
    dealer: int | None = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", tuple(self.levels))

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "levels": list(self.levels), "dealer": self.dealer}

    @classmethod
    def from_dict(cls, data: Any, where: str = "deal") -> "DealSpec":
        data = _object(data, where, ("seed", "levels", "dealer"))
        seed = _required(data, where, "seed", "the deal's seed, a string")
        _expect(isinstance(seed, str), where, "seed", seed, "a string")
        levels = data.get("levels", list(cls.levels))
        _expect(isinstance(levels, (list, tuple)) and len(levels) == 2
                and all(x in RANK_TEXT for x in levels), where, "levels", levels,
                "two ranks such as [\"2\", \"2\"] (2-10, J, Q, K, A)")
        dealer = data.get("dealer", cls.dealer)
        _expect(dealer is None or (_is_int(dealer) and dealer < 4), where, "dealer", dealer,
                "a seat 0-3, or null for the rules to find one")
        return cls(seed, (levels[0], levels[1]), dealer)


_BOT_FIELDS = ("name", *PLACED_FIELDS, "version_hash")


@dataclass(frozen=True)
class SeatBot:
    """The bot that plays one seat, as the referee process starts it: the name it has in its
    season and its manifest (command, protocol, folder, the folders on its ``PYTHONPATH``)."""

    name: str
    manifest: Manifest
    version_hash: str | None = None
    """The registry version the seat plays (its content hash): where it is set, the referee's
    machine fetches and builds that version (``scheduler.registry.versions.materialise``) and the
    manifest's folder and ``pythonpath`` are portable (``@bot/...``, ``@sdk``, ``@arena``)."""

    @classmethod
    def of(cls, name: str, manifest: Manifest) -> "SeatBot":
        """``manifest`` under the name ``name``."""
        return cls(name, manifest)

    @property
    def label(self) -> str:
        return self.manifest.label

    def to_dict(self) -> dict[str, Any]:
        """The seat's name, its manifest's fields (``Manifest.to_fields``) and its version."""
        out: dict[str, Any] = {"name": self.name, **self.manifest.to_fields()}
        if self.version_hash is not None:
            out["version_hash"] = self.version_hash
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "bot") -> "SeatBot":
        data = _object(data, where, _BOT_FIELDS)
        name = _required(data, where, "name", "a string")
        _expect(isinstance(name, str), where, "name", name, "a string")
        fields = {k: v for k, v in data.items() if k not in ("name", "version_hash")}
        return cls(name, Manifest.from_fields(fields, where=where),
                   version_hash=_version_hash(data, where))


def _version_hash(data: dict, where: str) -> str | None:
    v = data.get("version_hash")
    _expect(v is None or (isinstance(v, str) and len(v) == 64 and
                          all(c in "0123456789abcdef" for c in v)), where, "version_hash", v,
            "a bot version's content hash (64 hex digits), or null")
    return v


_SPEC_FIELDS = ("match_id", "variant", "options", "seed", "max_deals", "deals", "time_control",
                "seats", "bots", "sandbox")


@dataclass(frozen=True)
class MatchSpec:
    """One match for the referee to play: a whole game from ``seed`` (to its end, or
    ``max_deals``), or a list of ``deals``, each from its own seed; the time control, the
    seats' names and, when the referee process starts them, the seats' bots."""

    match_id: str
    variant: str
    options: dict[str, Any] = field(default_factory=dict)
    seed: str = "0"
    max_deals: int | None = None          # whole-game mode: stop after this many deals
    deals: list[DealSpec] | None = None   # deal-list mode
    time_control: TimeControl = field(default_factory=TimeControl)
    seat_names: list[str] = field(default_factory=lambda: ["", "", "", ""])
    bots: list[SeatBot] | None = None     # seat by seat, for ``referee.serve``
    sandbox: Any = None
    """The bots' sandbox: None for the default limits, a dict of limits (``SandboxPolicy``), or
    "none" to run them unsandboxed."""

    def __post_init__(self) -> None:
        where = f"match spec {self.match_id}"
        object.__setattr__(self, "seat_names", list(self.seat_names))
        if len(self.seat_names) != 4:
            raise ValueError(f"{where}: field 'seats' = {self.seat_names!r}: expected four "
                             "names, seats 0-3")
        if self.deals is not None:
            object.__setattr__(self, "deals", list(self.deals))
            if self.max_deals is not None or self.seed != MatchSpec.seed:
                raise ValueError(f"{where}: a deal list plays each deal from its own seed, "
                                 "once: give 'seed' and 'max_deals' only for a whole game")
        if self.bots is not None:
            object.__setattr__(self, "bots", list(self.bots))
            if len(self.bots) != 4:
                raise ValueError(f"{where}: field 'bots': expected four bots, seats 0-3; got "
                                 f"{len(self.bots)}")

    def to_dict(self) -> dict[str, Any]:
        """The plain-data form: a deal list's spec has ``deals`` and a whole game's ``seed``
        and ``max_deals``; ``bots`` only when there are bots."""
        out: dict[str, Any] = {"match_id": self.match_id, "variant": self.variant,
                               "options": self.options}
        if self.deals is not None:
            out["deals"] = [d.to_dict() for d in self.deals]
        else:
            out["seed"] = self.seed
            out["max_deals"] = self.max_deals
        out["time_control"] = self.time_control.to_dict()
        out["seats"] = list(self.seat_names)
        if self.bots is not None:
            out["bots"] = [b.to_dict() for b in self.bots]
        if self.sandbox is not None:
            out["sandbox"] = (self.sandbox.to_dict() if hasattr(self.sandbox, "to_dict")
                              else self.sandbox)
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "match spec") -> "MatchSpec":
        """The spec ``data`` describes; ``where`` (a file, a match id) starts every error."""
        data = _object(data, where, _SPEC_FIELDS)
        match_id = _required(data, where, "match_id", "the match's id")
        _expect(isinstance(match_id, str) and match_id, where, "match_id", match_id,
                "a non-empty string")
        variant = _required(data, where, "variant", "a variant id such as \"two-deck-fry\"")
        _expect(isinstance(variant, str), where, "variant", variant,
                "a variant id such as \"two-deck-fry\"")
        options = data.get("options", {})
        _expect(isinstance(options, dict), where, "options", options,
                "an object of rule options")
        seed = data.get("seed", cls.seed)
        _expect(isinstance(seed, (str, int)) and not isinstance(seed, bool), where, "seed",
                seed, "a string")
        max_deals = data.get("max_deals")
        _expect(max_deals is None or _is_int(max_deals, 1), where, "max_deals", max_deals,
                "a number of deals, 1 or more, or null for the whole game")
        deals = data.get("deals")
        if deals is not None:
            _expect(isinstance(deals, list) and deals, where, "deals", deals,
                    "a non-empty list of deals")
            deals = [DealSpec.from_dict(d, f"{where}: deals[{i}]") for i, d in enumerate(deals)]
        tc = TimeControl.from_dict(data.get("time_control"), f"{where}: time_control")
        bots = data.get("bots")
        if bots is not None:
            _expect(isinstance(bots, list) and len(bots) == 4, where, "bots", bots,
                    "four bots, seats 0-3")
            bots = [SeatBot.from_dict(b, f"{where}: bots[{i}]") for i, b in enumerate(bots)]
        seats = data.get("seats", [b.label for b in bots] if bots else ["", "", "", ""])
        _expect(isinstance(seats, list) and len(seats) == 4
                and all(isinstance(s, str) for s in seats), where, "seats", seats,
                "four names, seats 0-3")
        sandbox = data.get("sandbox")
        if sandbox is not None and sandbox != "none":
            from referee.seats.sandbox import SandboxPolicy
            sandbox = SandboxPolicy.from_dict(sandbox, f"{where}: sandbox").to_dict()
        return cls(match_id, variant, options, str(seed), max_deals, deals, tc, seats, bots,
                   sandbox)
