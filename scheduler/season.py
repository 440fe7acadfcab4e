"""Season files: which bots play, under which rules, in which format, on which cards.

A season file is TOML::

    name = "spring"
    variant = "two-deck-fry"          # one of the built variants
    format = "round_robin"            # round_robin | double_round_robin | gauntlet
    duplicate = true                  # each deal set twice, partnerships swapped (default)
    deal_sets = 4                     # deal sets per pairing (per leg)
    deals_per_set = 4                 # deals in one match
    seed = "spring-2026"              # a public label of the deals (default: the name)
    # secret = "..."                  # for reproducible research only: fixes every deal
    start_levels = ["2", "2"]         # levels every deal starts from
    # gauntlet = "greedy"             # gauntlet only: the bot that plays the field

    [options]                         # rule options over the variant's preset
    throw_penalty = 10

    [time_control]                    # per_decision_ms, bank_ms
    [fault_policy]                    # max_strikes, reconnect_window_ms, connect_timeout_ms,
                                      # max_reconnects

    [sandbox]                         # each seat's limits (referee.seats.sandbox.SandboxPolicy):
                                      # cpu_seconds, memory_mb, processes, open_files,
                                      # file_size_mb, tmpfs_mb, cpu_cores, ponder_cores

    [[bots]]
    manifest = "bots/greedy"          # a bot.toml or its folder, relative to this file
    # name = "greedy-2"               # optional: enter the same manifest twice
    [[bots]]
    bot = "cheap@1.0.0"               # or a version in the registry ("cheap": its latest)

Every error names the file, the field and what was expected. The match list is a pure function
of the file and the season's secret (``deal_seed``): the store keeps the secret, so a season
can be resumed or re-run anywhere it reaches; without the secret no one can tell the cards from
the names and ids a bot sees.

What defines the matches is the file's ``SeasonConfig`` (``scheduler.season_config``: what the
store keeps); every match spec of the scheduler is written by ``pairing_spec``.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.seats.manifest import Manifest, ManifestError, load_manifest, read_toml
from referee.match.spec import DEFAULT_TIME_CONTROL, DealSpec, MatchSpec, SeatBot, TimeControl
from referee.rules.cards import RANK_TEXT
from referee.seats.sandbox import SandboxPolicy

from scheduler.errors import ArenaError
from scheduler.season_config import LADDER_FIELDS, LadderConfig, SeasonConfig, SeasonFormat

FORMATS = tuple(SeasonFormat)
_TOP = {"name", "variant", "format", "duplicate", "deal_sets", "deals_per_set", "seed",
        "secret", "start_levels", "gauntlet", "options", "time_control", "fault_policy", "bots",
        "description", "sandbox", "queue_ahead", "placement_pairs", "active_versions",
        "bots_per_author", "rest_pairs_per_hour"}
#: a ladder's ``bots`` when every ready version of every author enters it
EVERY_READY = "every ready version"
#: a ladder's own fields and their defaults (``LadderConfig``)
LADDER_DEFAULTS = {k: getattr(LadderConfig(), k) for k in LADDER_FIELDS}
#: each ladder field's (least, most) value
_LADDER_RANGE = {"queue_ahead": (2, 10_000), "placement_pairs": (0, 10_000),
                 "active_versions": (1, 10_000), "bots_per_author": (0, 10_000),
                 "rest_pairs_per_hour": (0, 3600)}
# the referee's own defaults (one set, in the match spec)
_TIME = {k: getattr(DEFAULT_TIME_CONTROL, k) for k in ("per_decision_ms", "bank_ms")}
_FAULT = {k: getattr(DEFAULT_TIME_CONTROL, k) for k in ("max_strikes", "reconnect_window_ms",
                                                        "connect_timeout_ms", "max_reconnects")}
_MAY_BE_ZERO = {"max_reconnects"}  # 0: a seat whose stream drops does not come back
_BOT = {"manifest", "bot", "name"}


class SeasonError(ArenaError, ValueError):
    """A season file that cannot be used; the message names the file and the field."""


def new_secret() -> str:
    """A fresh season secret (what a store keeps for each season it opens)."""
    return secrets.token_hex(32)


def deal_seed(secret: str, label: str) -> str:
    """A deal's seed: HMAC-SHA256 of its public ``label`` (e.g. ``spring:leg0:set1:deal2``)
    keyed with the season's ``secret``, in hex. Without the secret, the label (and every name
    and id a bot sees) tells nothing of the cards."""
    return hmac.new(secret.encode("utf-8"), label.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class SeasonBot:
    """A bot as its season names it (a folder or a registry reference), once pinned with the
    manifest it plays here and the one its match specs carry."""

    name: str             # unique within the season
    manifest: Manifest | None  # None for a registry reference not yet pinned
    ref: str | None = None     # ``bot = "name@version"`` (or "name": the latest version)
    version_hash: str | None = None  # the registry version pinned (``scheduler.pinning``)
    portable: Manifest | None = None  # the pinned version's manifest as match specs carry it

    @property
    def loaded(self) -> Manifest:
        """The manifest of a bot that has one: a folder, or a reference pinned and fetched
        here (``scheduler.pinning``); a reference not yet pinned has none."""
        if self.manifest is None:
            raise SeasonError(f"bot {self.name!r} ({self.ref}): not pinned to a version yet")
        return self.manifest

    def seat_bot(self) -> SeatBot:
        """This bot as a match spec names it for a seat: its pinned version where it has one
        (portable: any machine fetches it), else its folder."""
        if self.version_hash is not None:
            return SeatBot(self.name, self.portable or self.loaded,
                           version_hash=self.version_hash)
        return SeatBot.of(self.name, self.loaded)

    def to_dict(self) -> dict[str, Any]:
        return self.seat_bot().to_dict()


@dataclass(frozen=True)
class MatchPlan:
    """One match of a season: who sits where, and on which deals."""

    match_id: str
    ordinal: int
    pairing: str          # "a|b": the two bots, in season order
    leg: int
    deal_set: int
    mirror: bool          # the second match of a duplicate pair (partnerships swapped)
    seats: tuple[str, str, str, str]
    deals: tuple[DealSpec, ...]

    @property
    def cluster(self) -> str:
        """The matches that share cards (a duplicate pair) share a cluster."""
        return f"{self.pairing}#{self.leg}#{self.deal_set}"


def pairing_spec(match_id: str, team0: SeatBot, team1: SeatBot, *, variant: str,
                 options: dict[str, Any], deals: Sequence[DealSpec], time_control: TimeControl,
                 sandbox: SandboxPolicy | None = None) -> MatchSpec:
    """A season's match: ``team0`` (seats 0 and 2) against ``team1`` (seats 1 and 3) on
    ``deals``, under the variant and its ``options``, the time control and fault policy, and
    the seats' ``sandbox`` limits (None: the defaults)."""
    seats = [team0, team1, team0, team1]
    return match_spec(match_id, [b.name for b in seats], variant=variant, options=options,
                      deals=deals, time_control=time_control, bots=seats, sandbox=sandbox)


def match_spec(match_id: str, names: Sequence[str], *, variant: str, time_control: TimeControl,
               options: dict[str, Any] | None = None, deals: Sequence[DealSpec] | None = None,
               seed: str = "0", max_deals: int | None = None,
               bots: Sequence[SeatBot] | None = None,
               sandbox: SandboxPolicy | None = None) -> MatchSpec:
    """The one writer of a match spec: the four seats' ``names`` (and ``bots``, for the
    referee process), on ``deals`` (a season's), or a game of ``max_deals`` from ``seed`` (a
    person's game in the browser)."""
    return MatchSpec(match_id, variant, dict(options or {}), seed=seed, max_deals=max_deals,
                     deals=None if deals is None else list(deals), time_control=time_control,
                     seat_names=list(names), bots=None if bots is None else list(bots),
                     sandbox=None if sandbox is None else sandbox.to_dict())


@dataclass(frozen=True)
class Season:
    """A season file read: its configuration (``SeasonConfig``, what the store keeps), its
    bots as the file names them, and the key of every deal seed (``secret``: the file's, given
    on purpose, else a fresh one that ``open_season`` replaces by the stored season's; never in
    the configuration nor a repr)."""

    path: Path
    config: SeasonConfig
    bots: tuple[SeasonBot, ...]
    secret: str = field(default_factory=new_secret, repr=False)
    secret_given: bool = False

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def variant(self) -> str:
        return self.config.variant

    @property
    def format(self) -> SeasonFormat:
        return self.config.format

    def config_hash(self) -> str:
        text = json.dumps(self.config.to_json(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def pairings(self) -> list[tuple[str, str, int]]:
        """(bot a, bot b, leg) for every pairing of the format."""
        names = [b.name for b in self.bots]
        fmt, gauntlet = self.config.format, self.config.gauntlet
        if fmt is SeasonFormat.LADDER:  # chosen as it runs (``scheduler.ladder``)
            return []
        if fmt is SeasonFormat.GAUNTLET and gauntlet is not None:
            return [(gauntlet, n, 0) for n in names if n != gauntlet]
        legs = 2 if fmt is SeasonFormat.DOUBLE_ROUND_ROBIN else 1
        return [(a, b, leg) for leg in range(legs) for a, b in itertools.combinations(names, 2)]

    def deal_label(self, leg: int, k: int, j: int) -> str:
        """The public label of deal ``j`` of set ``k`` of ``leg`` (its seed is keyed with the
        secret: ``deal_seed``)."""
        return f"{self.config.seed}:leg{leg}:set{k}:deal{j}"

    def deal_set(self, leg: int, k: int) -> tuple[DealSpec, ...]:
        """The deals of set ``k`` of ``leg``: the same cards for every pairing."""
        return tuple(DealSpec(deal_seed(self.secret, self.deal_label(leg, k, j)),
                              self.config.start_levels, j % 4)
                     for j in range(self.config.deals_per_set))

    def check_deal(self) -> DealSpec:
        """The deal of ``bots check`` under this season's rules: from the secret too, and no
        deal of the season's matches."""
        return DealSpec(deal_seed(self.secret, f"{self.config.seed}:check"),
                        self.config.start_levels, 0)

    def plan(self) -> list[MatchPlan]:
        """Every match of the season, in the order they are enqueued."""
        out: list[MatchPlan] = []
        duplicate = self.config.duplicate
        for p, (a, b, leg) in enumerate(self.pairings()):
            for k in range(self.config.deal_sets):
                deals = self.deal_set(leg, k)
                if duplicate:
                    layouts = [(a, b, False), (b, a, True)]
                else:  # plain: one match per deal set, seating alternating
                    first = (a, b) if (k + leg) % 2 == 0 else (b, a)
                    layouts = [(first[0], first[1], False)]
                if leg == 1 and duplicate:
                    layouts.reverse()
                for team0, team1, mirror in layouts:
                    ordinal = len(out)
                    out.append(MatchPlan(
                        match_id=f"{self.name}-{ordinal:05d}", ordinal=ordinal,
                        pairing=f"{a}|{b}", leg=leg, deal_set=k, mirror=mirror,
                        seats=(team0, team1, team0, team1), deals=deals))
        return out

    def match_spec(self, plan: MatchPlan) -> MatchSpec:
        """What the referee process needs to play ``plan`` (its bots as pinned)."""
        by_name = {b.name: b for b in self.bots}
        c = self.config
        return pairing_spec(plan.match_id, by_name[plan.seats[0]].seat_bot(),
                            by_name[plan.seats[1]].seat_bot(), variant=c.variant,
                            options=c.options, deals=plan.deals, time_control=c.time_control,
                            sandbox=c.sandbox)


def _expect(ok: bool, path: Path, name: str, value: Any, expected: str) -> None:
    if not ok:
        raise SeasonError(f"{path}: field {name!r} = {value!r}: expected {expected}")


def _table(data: dict, key: str, defaults: dict[str, int], path: Path) -> dict[str, int]:
    got = data.get(key, {})
    _expect(isinstance(got, dict), path, key, got, "a table such as [" + key + "]")
    unknown = set(got) - set(defaults)
    if unknown:
        raise SeasonError(f"{path}: field {key}.{sorted(unknown)[0]}: unknown; expected one "
                          f"of {', '.join(sorted(defaults))}")
    out = dict(defaults)
    for k, v in got.items():
        least = 0 if k in _MAY_BE_ZERO else 1
        _expect(isinstance(v, int) and not isinstance(v, bool) and v >= least, path,
                f"{key}.{k}", v, "a positive integer (milliseconds or a count)" if least else
                "a count, 0 or more")
        out[k] = v
    return out


def load_season(path: str | Path) -> Season:
    """Read and check a season file (and every bot manifest it names)."""
    from referee.rules.variants import rules_for
    path = Path(path)
    data = read_toml(path, "season", _TOP, ("name", "variant", "bots"), SeasonError)
    name = data["name"]
    _expect(isinstance(name, str) and name.replace("-", "").replace("_", "").isalnum(), path,
            "name", name, "a name of letters, digits, '-' and '_'")
    variant = data["variant"]
    options = data.get("options", {})
    _expect(isinstance(options, dict), path, "options", options, "a table [options]")
    try:
        rules = rules_for(variant, options)
    except ValueError as e:
        field_name = "variant" if "variant" in str(e) and "option" not in str(e) else "options"
        raise SeasonError(f"{path}: field {field_name!r}: {e}") from None
    except TypeError as e:
        raise SeasonError(f"{path}: field 'options': {e}") from None
    fmt = data.get("format", SeasonFormat.ROUND_ROBIN.value)
    _expect(fmt in FORMATS, path, "format", fmt, "one of " + ", ".join(FORMATS))
    duplicate = data.get("duplicate", True)
    _expect(isinstance(duplicate, bool), path, "duplicate", duplicate, "true or false")
    counts = {}
    for f, default in (("deal_sets", 2), ("deals_per_set", 4)):
        v = data.get(f, default)
        _expect(isinstance(v, int) and not isinstance(v, bool) and v >= 1, path, f, v,
                "an integer >= 1")
        counts[f] = v
    seed = data.get("seed", name)
    _expect(isinstance(seed, (str, int)) and not isinstance(seed, bool), path, "seed", seed,
            "a string or an integer")
    secret = data.get("secret")
    _expect(secret is None or (isinstance(secret, str) and 16 <= len(secret) <= 200), path,
            "secret", "..." if isinstance(secret, str) else secret,
            "a string of 16 to 200 characters (for reproducible research only: whoever reads "
            "it can tell every deal's cards)")
    levels = data.get("start_levels", [rules.start_level] * 2)
    _expect(isinstance(levels, list) and len(levels) == 2 and all(x in RANK_TEXT for x in levels),
            path, "start_levels", levels, "two ranks such as [\"2\", \"2\"] (2-10, J, Q, K, A)")
    time_control = TimeControl(**_table(data, "time_control", _TIME, path),
                               **_table(data, "fault_policy", _FAULT, path))
    sandbox = data.get("sandbox")
    if sandbox is not None:
        try:
            sandbox = SandboxPolicy.from_dict(sandbox, f"{path}: field 'sandbox'")
        except ValueError as e:
            raise SeasonError(str(e)) from None
    ladder = None
    open_entry = False
    bots_data = data["bots"]
    if fmt == SeasonFormat.LADDER:
        _expect(duplicate, path, "duplicate", duplicate, "true: a ladder's unit is the "
                "duplicate pair")
        given_ladder = {}
        for f, default in LADDER_DEFAULTS.items():
            v = data.get(f, default)
            least, most = _LADDER_RANGE[f]
            _expect(isinstance(v, int) and not isinstance(v, bool) and least <= v <= most,
                    path, f, v, f"an integer from {least} to {most}")
            given_ladder[f] = v
        if bots_data == EVERY_READY:
            open_entry, bots_data = True, []
        ladder = LadderConfig(**given_ladder, open_entry=open_entry)
        _expect(isinstance(bots_data, list), path, "bots", "...",
                f'"{EVERY_READY}" or [[bots]] entries')
    else:
        given = sorted(set(LADDER_DEFAULTS) & set(data))
        if given:
            raise SeasonError(f"{path}: field {given[0]!r}: only for format = \"ladder\" (the "
                              f"format is {fmt!r})")
        _expect(isinstance(bots_data, list) and len(bots_data) >= 2, path, "bots", "...",
                "at least two [[bots]] entries, each with manifest = \"path/to/bot\"")
    bots: list[SeasonBot] = []
    for i, entry in enumerate(bots_data):
        where = f"bots[{i}]"
        _expect(isinstance(entry, dict), path, where, entry, "a table with manifest = \"...\"")
        unknown = set(entry) - _BOT
        if unknown:
            raise SeasonError(f"{path}: field {where}.{sorted(unknown)[0]!r}: unknown; expected "
                              f"one of {', '.join(sorted(_BOT))}")
        if ("manifest" in entry) == ("bot" in entry):
            raise SeasonError(f"{path}: field {where}: expected either manifest = \"path\" (a "
                              "bot.toml or its folder) or bot = \"name@version\" (a version "
                              "in the registry; \"name\" for its latest), not "
                              f"{'both' if 'bot' in entry else 'neither'}")
        ref = entry.get("bot")
        if ref is not None:
            _expect(isinstance(ref, str) and bool(ref.strip("@")) and ref.count("@") <= 1, path,
                    f"{where}.bot", ref, '"name@version" or "name"')
            manifest = None
            bot_name = entry.get("name", ref.partition("@")[0])
        else:
            try:
                manifest = load_manifest(path.parent / entry["manifest"])
            except ManifestError as e:
                raise SeasonError(f"{path}: field {where}.manifest: {e}") from None
            bot_name = entry.get("name", manifest.name)
        _expect(isinstance(bot_name, str) and bool(bot_name) and "|" not in bot_name, path,
                f"{where}.name", bot_name, "a non-empty name without '|'")
        if any(b.name == bot_name for b in bots):
            raise SeasonError(f"{path}: field {where}.name: {bot_name!r} is already in the "
                              "season; give one of them another name = \"...\"")
        bots.append(SeasonBot(bot_name, manifest, ref=ref))
    gauntlet = data.get("gauntlet")
    if fmt == SeasonFormat.GAUNTLET:
        _expect(gauntlet in [b.name for b in bots], path, "gauntlet", gauntlet,
                "the name of one of the season's bots: " + ", ".join(b.name for b in bots))
    elif gauntlet is not None:
        raise SeasonError(f"{path}: field 'gauntlet': only for format = \"gauntlet\" (the "
                          f"format is {fmt!r})")
    config = SeasonConfig(name=name, variant=variant, seed=str(seed),
                          format=SeasonFormat(fmt), duplicate=duplicate,
                          deal_sets=counts["deal_sets"], deals_per_set=counts["deals_per_set"],
                          start_levels=(levels[0], levels[1]), gauntlet=gauntlet,
                          options=options, time_control=time_control,
                          bots=tuple(b.name for b in bots), sandbox=sandbox, ladder=ladder)
    return Season(path=path, config=config, bots=tuple(bots),
                  **({"secret": secret, "secret_given": True} if secret is not None else {}))
