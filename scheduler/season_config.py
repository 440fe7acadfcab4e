"""A season's configuration: what defines its matches, as the store keeps it.

``SeasonConfig`` is the contract between a season file (``scheduler.season.load_season`` builds
it), the store (``SeasonRow.config`` reads it back) and every reader of a stored season
(standings, reports, the ladder, the command line, the dashboard). One codec: ``to_json`` is
the form stored, ``from_json`` reads any form stored so far (fields added later are left out
while they hold their defaults, so a season stored before them reads back, and hashes, as it
did). A field that cannot be used is a ``ValueError`` naming where it was read, the field and
what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from referee.match.spec import DEFAULT_TIME_CONTROL, TimeControl
from referee.rules.cards import RANK_TEXT
from referee.seats.sandbox import SandboxPolicy


class SeasonFormat(StrEnum):
    """How a season pairs its bots (its file's ``format``)."""

    ROUND_ROBIN = "round_robin"
    """Every bot against every other, once (循环赛)."""
    DOUBLE_ROUND_ROBIN = "double_round_robin"
    """Every pairing twice: a second leg on other deals."""
    GAUNTLET = "gauntlet"
    """One bot (``gauntlet``) against each of the others."""
    LADDER = "ladder"
    """An open season that runs until cancelled: its pairs are chosen as it runs."""


#: the clock's part of a time control, stored under ``time_control``; the rest under
#: ``fault_policy``
_CLOCK = ("per_decision_ms", "bank_ms")
_FAULTS = ("max_strikes", "reconnect_window_ms", "connect_timeout_ms", "max_reconnects")
#: fields added after seasons were first stored: stored only when set otherwise
_FAULTS_LATER = ("max_reconnects",)
_LADDER_LATER = ("bots_per_author", "rest_pairs_per_hour")
_KNOWN = ("ladder", "name", "variant", "format", "duplicate", "deal_sets", "deals_per_set",
          "seed", "start_levels", "gauntlet", "options", "time_control", "fault_policy", "bots",
          "sandbox")


def _expect(ok: bool, where: str, name: str, value: Any, expected: str) -> None:
    if not ok:
        raise ValueError(f"{where}: field {name!r} = {value!r}: expected {expected}")


def _is_int(v: Any, least: int = 0) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= least


def _object(data: Any, where: str, known: tuple[str, ...]) -> dict:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object; got {type(data).__name__}")
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; expected {', '.join(known)}")
    return data


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """A ladder's own settings: matches queued or playing at once, placement pairs of a new
    version, the newest versions of each bot that stay in, the bots of one author in it at once
    (0: no cap), the pairs an hour it plays once its ranking is settled, and whether every
    ready version enters it (its file's ``bots = "every ready version"``)."""

    queue_ahead: int = 8
    placement_pairs: int = 3
    active_versions: int = 1
    bots_per_author: int = 0
    rest_pairs_per_hour: int = 6
    open_entry: bool = False

    def to_json(self) -> dict[str, Any]:
        later = {f.name: f.default for f in fields(self) if f.name in _LADDER_LATER}
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)
                               if f.name != "open_entry"
                               and (f.name not in later or getattr(self, f.name) != later[f.name])}
        out["open_entry"] = self.open_entry
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "ladder") -> LadderConfig:
        names = tuple(f.name for f in fields(cls))
        data = _object(data, where, names)
        for name, v in data.items():
            if name == "open_entry":
                _expect(isinstance(v, bool), where, name, v, "true or false")
            else:
                _expect(_is_int(v), where, name, v, "a whole number, 0 or more")
        return cls(**data)


LADDER_FIELDS = tuple(f.name for f in fields(LadderConfig) if f.name != "open_entry")
"""A ladder's fields a season file gives at its top level."""


@dataclass(frozen=True, slots=True)
class SeasonConfig:
    """What defines a season's matches: its variant and rule ``options``, ``format``, whether
    each deal set is played twice with the partnerships swapped (``duplicate``), deal sets per
    pairing and deals per match, the public label of its deals (``seed``; the cards come from
    the secret the store keeps), the levels every deal starts from, the gauntlet's bot, the
    time control and fault policy, the seats' sandbox limits (None: the defaults), its bots'
    names (a ladder: those its file names) and a ladder's settings."""

    name: str
    variant: str
    seed: str
    format: SeasonFormat = SeasonFormat.ROUND_ROBIN
    duplicate: bool = True
    deal_sets: int = 2
    deals_per_set: int = 4
    start_levels: tuple[str, str] = ("2", "2")
    gauntlet: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    time_control: TimeControl = DEFAULT_TIME_CONTROL
    bots: tuple[str, ...] = ()
    sandbox: SandboxPolicy | None = None
    ladder: LadderConfig | None = None

    @property
    def is_ladder(self) -> bool:
        return self.format is SeasonFormat.LADDER

    def planned_matches(self) -> int:
        """The matches the season plans (a ladder: none, it adds them as it runs)."""
        n = len(self.bots)
        pairings = {SeasonFormat.ROUND_ROBIN: n * (n - 1) // 2,
                    SeasonFormat.DOUBLE_ROUND_ROBIN: n * (n - 1),
                    SeasonFormat.GAUNTLET: max(n - 1, 0)}.get(self.format, 0)
        return pairings * self.deal_sets * (2 if self.duplicate else 1)

    def to_json(self) -> dict[str, Any]:
        """The form the store keeps (and ``Season.config_hash`` hashes)."""
        tc = self.time_control
        out: dict[str, Any] = {}
        if self.is_ladder and self.ladder is not None:
            out["ladder"] = self.ladder.to_json()
        out.update(name=self.name, variant=self.variant, format=self.format.value,
                   duplicate=self.duplicate, deal_sets=self.deal_sets,
                   deals_per_set=self.deals_per_set, seed=self.seed,
                   start_levels=list(self.start_levels), gauntlet=self.gauntlet,
                   options=self.options,
                   time_control={k: getattr(tc, k) for k in _CLOCK},
                   fault_policy={k: getattr(tc, k) for k in _FAULTS
                                 if k not in _FAULTS_LATER
                                 or getattr(tc, k) != getattr(DEFAULT_TIME_CONTROL, k)},
                   bots=list(self.bots))
        if self.sandbox is not None:
            out["sandbox"] = self.sandbox.to_dict()
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "season config") -> SeasonConfig:
        """The configuration ``data`` (a stored form) describes; a field left out takes its
        default (``seed``: the name)."""
        data = _object(data, where, _KNOWN)
        name = data.get("name")
        _expect(isinstance(name, str) and name != "", where, "name", name, "the season's name")
        variant = data.get("variant")
        _expect(isinstance(variant, str), where, "variant", variant,
                "a variant id such as \"two-deck-fry\"")
        fmt = data.get("format", SeasonFormat.ROUND_ROBIN.value)
        _expect(fmt in tuple(SeasonFormat), where, "format", fmt,
                "one of " + ", ".join(SeasonFormat))
        duplicate = data.get("duplicate", True)
        _expect(isinstance(duplicate, bool), where, "duplicate", duplicate, "true or false")
        default = {f.name: f.default for f in fields(cls)}
        counts = {k: data.get(k, default[k]) for k in ("deal_sets", "deals_per_set")}
        for k, v in counts.items():
            _expect(_is_int(v, 1), where, k, v, "an integer >= 1")
        seed = data.get("seed", name)
        _expect(isinstance(seed, (str, int)) and not isinstance(seed, bool), where, "seed",
                seed, "a string")
        levels = data.get("start_levels", ["2", "2"])
        _expect(isinstance(levels, list) and len(levels) == 2
                and all(x in RANK_TEXT for x in levels), where, "start_levels", levels,
                "two ranks such as [\"2\", \"2\"]")
        gauntlet = data.get("gauntlet")
        _expect(gauntlet is None or isinstance(gauntlet, str), where, "gauntlet", gauntlet,
                "a bot's name, or null")
        options = data.get("options", {})
        _expect(isinstance(options, dict), where, "options", options, "an object of options")
        bots = data.get("bots", [])
        _expect(isinstance(bots, list) and all(isinstance(b, str) for b in bots), where,
                "bots", bots, "a list of the bots' names")
        clock = _object(data.get("time_control", {}), f"{where}: time_control", _CLOCK)
        faults = _object(data.get("fault_policy", {}), f"{where}: fault_policy", _FAULTS)
        tc = TimeControl.from_dict({**clock, **faults}, f"{where}: time control")
        sandbox = data.get("sandbox")
        if sandbox is not None:
            sandbox = SandboxPolicy.from_dict(sandbox, f"{where}: sandbox")
        ladder = data.get("ladder")
        if fmt == SeasonFormat.LADDER:
            ladder = LadderConfig.from_json({} if ladder is None else ladder, f"{where}: ladder")
        else:
            _expect(ladder is None, where, "ladder", ladder, "no ladder settings (the format "
                    f"is {fmt!r})")
        return cls(name=name, variant=variant, seed=str(seed), format=SeasonFormat(fmt),
                   duplicate=duplicate, deal_sets=counts["deal_sets"],
                   deals_per_set=counts["deals_per_set"], start_levels=(levels[0], levels[1]),
                   gauntlet=gauntlet, options=options, time_control=tc, bots=tuple(bots),
                   sandbox=sandbox, ladder=ladder)
