"""The store's rows, typed: frozen dataclasses of the columns a query reads or a write takes.
A JSON column (``*_json``) is encoded here only (``encoded``, ``NewBot``, ``tally_columns``, ...)
and read back here only, by the ``JsonColumn`` attribute that types it (``MatchRow.seats``,
``SeasonRow.config``, ...); a row is read by attribute, never by key."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scheduler.states import MatchStatus
from scheduler.store.plain_rows import (AttemptRow, AuditEntry, AuthorRow,  # noqa: F401
                                        BotOwner, Cancelling, IntakeItem, LadderEntryRow,
                                        MatchPage, QueuedVersion, RatingRow, ReadyVersion,
                                        ResultPace, Row, ScrimmageRow, SealedResult,
                                        SealingMatch, SeasonCancel, SeasonSecret, SessionRow,
                                        StatusCounts, VersionRemoval, VersionStateRow,
                                        columns_of, deal_seeds, values_of)
from scheduler.store.schema import TALLY_COLUMNS

if TYPE_CHECKING:  # (types only: the store counts no tally, plays no match)
    from referee.match.matchfile import MatchFile
    from referee.seats.manifest import Manifest
    from scheduler.stats.scores import MatchTally


class JsonColumn:
    """A typed attribute of the JSON column ``column``, decoded on first use and kept: None
    for a null column, else ``convert(row, value)`` of the value (or the value itself)."""

    def __init__(self, column: str, convert: Callable[[Any, Any], Any] | None = None) -> None:
        self.column, self.convert = column, convert

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, row, owner=None):
        if row is None:
            return self
        text = getattr(row, self.column)
        value = None if text is None else json.loads(text)
        if value is not None and self.convert is not None:
            value = self.convert(row, value)
        row.__dict__[self.name] = value  # kept: the next read is a plain attribute
        return value


def _tuple(_row, value) -> tuple:
    return tuple(value)


def _summary(row, value):
    from referee.match.matchfile import MatchSummary
    return MatchSummary.from_dict(value, f"match {row.id}: summary")


def _season_config(row, value):
    from scheduler.season_config import SeasonConfig
    return SeasonConfig.from_json({"name": row.name, **value}, f"season {row.name}: config")


class _Seats:
    #: the bot of each seat, seats 0 to 3 (team 0: seats 0 and 2)
    seats = JsonColumn("seats_json", _tuple)


class _Manifest:
    #: the manifest's fields as stored
    manifest_fields = JsonColumn("manifest_json")


class _Summary:
    #: the result's summary (``MatchSummary``; RecordError naming the match if malformed)
    summary = JsonColumn("summary_json", _summary)


class _Tally(_Summary):
    #: team 0's continuous outcome of each deal (None: a result written before these scores)
    deal_scores = JsonColumn("deal_scores_json")
    #: the seats' match points (three-deck; else None)
    match_points = JsonColumn("match_points_json")


# -- seasons and their bots ---------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SeasonRow(Row):
    """A season; ``config``: its configuration as stored (``SeasonConfig``)."""
    name: str
    config_json: str
    config_hash: str | None = None
    file: str | None = None
    created_at: float | None = None

    config = JsonColumn("config_json", _season_config)

    @classmethod
    def of_config(cls, name: str, config: dict) -> "SeasonRow":
        """A season not stored, of ``config`` (its configuration's JSON value)."""
        return cls(name, encoded(config))


@dataclass(frozen=True, eq=False)
class SeasonOverview(SeasonRow):
    """A season with its matches counted by status and its cancel (None: not cancelled)."""
    counts: StatusCounts = field(default_factory=StatusCounts)
    cancel: SeasonCancel | None = None


@dataclass(frozen=True, eq=False)
class BotRow(_Manifest, Row):
    """A season's bot; ``manifest_fields``: its ``SeasonBot.to_dict()`` and its files' hashes
    (a store older than those hashes: none)."""
    id: int
    season: str
    name: str
    version: str
    content_hash: str
    manifest_json: str
    checked_hash: str | None
    version_hash: str | None


@dataclass(frozen=True, eq=False)
class BotVersionRow(_Manifest, Row):
    """A registry version (``bot_versions``); ``manifest_fields``: its manifest as submitted
    (``Manifest.to_fields(placed=False)``; ``manifest()`` reads it back)."""
    id: int
    name: str
    version: str
    content_hash: str
    author: str | None
    protocol: str
    language: str | None
    size: int
    files: int
    manifest_json: str
    submitted_at: float

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def manifest(self) -> Manifest:
        """Its manifest, portable (in ``@bot``; ``registry.versions.located`` places it)."""
        from referee.seats.manifest import Manifest
        return Manifest.from_fields(self.manifest_fields, folder=Path("@bot"),
                                    where=f"{self.ref}: its manifest")


def encoded(value: Any, **dumps) -> str:
    """The text of a JSON column holding ``value``: the one encoder of the store's columns."""
    return json.dumps(value, **dumps)


def decoded(text: str) -> Any:
    """The value of a JSON column's ``text`` (a query that reads one column, not a row)."""
    return json.loads(text)


def tally_columns(tally: MatchTally | None) -> dict:
    """A result's tally columns (``TALLY_COLUMNS``) of ``tally``; all null for None."""
    if tally is None:
        return dict.fromkeys(TALLY_COLUMNS)
    out = {k: getattr(tally, k) for k in TALLY_COLUMNS if not k.endswith("_json")}
    return out | {"match_points_json": tally.match_points and encoded(list(tally.match_points)),
                  "deal_scores_json": encoded(list(tally.deal_scores))}


def played_columns(match: MatchFile) -> dict:
    """A played match's result columns (``result_json``, ``summary_json``), of its record."""
    assert match.result is not None, f"match {match.match_id}: its record has no result"
    return {"result_json": encoded(match.result.to_dict()),
            "summary_json": encoded(match.summary().to_dict())}


# -- what is written ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewBot:
    """A season's bot to store; ``manifest_fields``: its ``SeasonBot.to_dict()`` and its files'
    hashes; ``checked_hash``: the content its check passed (None: not checked here)."""
    name: str
    version: str
    content_hash: str
    manifest_fields: dict
    version_hash: str | None
    checked_hash: str | None = None

    def columns(self) -> dict:
        """Its ``bots`` columns (but its season's)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return out | {"manifest_json": encoded(out.pop("manifest_fields"))}


@dataclass(frozen=True, slots=True)
class NewVersion:
    """A registry version to store (``bot_versions``); ``manifest_fields``: its manifest
    (``Manifest.to_fields(placed=False)``)."""
    name: str
    version: str
    content_hash: str
    author: str | None
    protocol: str
    language: str | None
    size: int
    files: int
    manifest_fields: dict
    submitted_at: float

    def columns(self) -> dict:
        """Its ``bot_versions`` columns (but its id)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return out | {"manifest_json": encoded(out.pop("manifest_fields"), sort_keys=True)}


# -- matches ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PlannedMatch:
    """A match of a season's plan to store, pending; ``spec``: its ``MatchSpec.to_dict()``."""
    id: str
    ordinal: int
    pairing: str
    cluster: str
    mirror: bool
    seats: tuple[str, ...]
    spec: dict

    def columns(self) -> dict:
        """Its ``matches`` columns (but its season's, status and attempts)."""
        return {"id": self.id, "ordinal": self.ordinal, "pairing": self.pairing,
                "cluster": self.cluster, "mirror": self.mirror,
                "seats_json": encoded(list(self.seats)),
                "spec_json": encoded(self.spec, ensure_ascii=False)}


@dataclass(frozen=True, eq=False)
class MatchRow(_Seats, Row):
    """A match; ``spec``: its ``MatchSpec`` as stored (``MatchSpec.from_dict`` reads it)."""
    id: str
    season: str
    ordinal: int
    pairing: str
    cluster: str
    mirror: bool
    seats_json: str
    spec_json: str
    status: str
    attempts: int
    lease_owner: str | None
    lease_until: float | None
    enqueued_at: float | None
    started_at: float | None
    finished_at: float | None
    error: str | None

    spec = JsonColumn("spec_json")

    @property
    def variant(self) -> str:
        return self.spec["variant"]

    @property
    def deal_seeds(self) -> frozenset[str]:
        """The seeds of the cards it deals."""
        return deal_seeds(self.spec)


@dataclass(frozen=True, eq=False)
class MatchResultRow(_Tally, MatchRow):
    """A match and its result's columns (all None before one is written); ``result``: the
    referee's result as stored (``MatchResult.to_dict()``)."""
    result_json: str | None = None
    summary_json: str | None = None
    duration_s: float | None = None
    worker: str | None = None
    deal_count: int | None = None
    score_0: float | None = None
    score_1: float | None = None
    net_0: int | None = None
    net_1: int | None = None
    forfeit_team: int | None = None
    strikes_0: int | None = None
    strikes_1: int | None = None
    faults: int | None = None
    gain_0: int | None = None
    gain_1: int | None = None
    attacks_0: int | None = None
    attack_points_0: int | None = None
    attacks_1: int | None = None
    attack_points_1: int | None = None
    match_points_json: str | None = None
    deal_scores_json: str | None = None

    result = JsonColumn("result_json")

    @property
    def played(self) -> bool:
        """Whether it has a result."""
        return self.summary_json is not None


@dataclass(frozen=True, eq=False)
class StandingsRow(_Seats, _Tally, Row):
    """What the standings read of a match: ``played`` (it has a result) and its result's tally
    columns (``scheduler.stats.scores.match_tally``); ``summary_json`` only where they are missing
    (a result written before them)."""
    id: str
    cluster: str
    status: str
    seats_json: str
    played: bool
    summary_json: str | None
    deal_count: int | None = None
    score_0: float | None = None
    score_1: float | None = None
    net_0: int | None = None
    net_1: int | None = None
    forfeit_team: int | None = None
    strikes_0: int | None = None
    strikes_1: int | None = None
    faults: int | None = None
    gain_0: int | None = None
    gain_1: int | None = None
    attacks_0: int | None = None
    attack_points_0: int | None = None
    attacks_1: int | None = None
    attack_points_1: int | None = None
    match_points_json: str | None = None
    deal_scores_json: str | None = None

    @classmethod
    def of(cls, row: Row | Mapping) -> "StandingsRow":
        """``row`` (a ``StandingsRow``, a ``MatchResultRow`` or a mapping of their columns) as
        the standings read it; without a ``played`` column it is played when it has a
        summary."""
        if isinstance(row, cls):
            return row
        values = values_of(row, columns_of(cls))
        if isinstance(row, Row):
            values["played"] = bool(getattr(row, "played", values["summary_json"] is not None))
        else:
            values["played"] = bool(row["played"]) if "played" in row else \
                row.get("summary_json") is not None
        return cls(**values)

    @classmethod
    def of_played(cls, match_id: str, cluster: str, seats, summary: dict) -> "StandingsRow":
        """A match played but not stored: its seats' bots and its summary's JSON value."""
        return cls(match_id, cluster, MatchStatus.DONE, encoded(list(seats)), True,
                   encoded(summary))

    @property
    def tallied(self) -> bool:
        """Whether its tally columns are stored (else they are counted from its summary)."""
        return self.deal_count is not None and self.deal_scores_json is not None

    def with_tally(self, tally: MatchTally) -> "StandingsRow":
        """The row with the tally columns of ``tally``."""
        return dataclasses.replace(self, **tally_columns(tally))


# -- what else a result leaves ------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PairScoreRow(Row):
    """A scored duplicate pair; ``deal_diffs``: bot_a's paired difference of each deal."""
    season: str
    cluster: str
    bot_a: str
    bot_b: str
    deals: int
    score_a: float
    diff_a: float
    deal_diffs_json: str
    written_at: float

    deal_diffs = JsonColumn("deal_diffs_json")


@dataclass(frozen=True, eq=False)
class FaultRow(_Summary, Row):
    """What the bot-fault filters read of a match: its result's ``faults`` and
    ``forfeit_team`` columns, and ``summary_json`` only where they are missing (a result
    written before them)."""
    id: str
    faults: int | None
    forfeit_team: int | None
    summary_json: str | None

    @property
    def bot_faults(self) -> tuple[int, int | None]:
        """Its bot faults and forfeiting team: its columns, else its summary's; (0, None)
        before a result."""
        if self.faults is not None or self.summary_json is None:
            return self.faults or 0, self.forfeit_team
        return self.summary.faults, self.summary.forfeit_team
