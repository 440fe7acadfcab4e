"""The store's rows that carry no JSON column: frozen values of what the jobs of the store
return beside the season and match rows of ``rows`` (which re-exports them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from scheduler.states import ScrimmageKind
from scheduler.store.schema import STATUSES

R = TypeVar("R", bound="Row")


# -- a row of a read ----------------------------------------------------------------------
_COLUMN_NAMES: dict[type, tuple[str, ...]] = {}


def columns_of(cls: type) -> tuple[str, ...]:
    """The columns of a kind of row: its dataclass fields' names."""
    got = _COLUMN_NAMES.get(cls)
    if got is None:
        got = _COLUMN_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return got


class Row:
    """A row of a read: its columns are its dataclass fields, read as attributes."""

    __slots__ = ()

    @classmethod
    def of(cls: type[R], row: Row | Mapping) -> R:
        """``row`` as this kind of row: itself, or the columns of another row or of a mapping
        (a SQLAlchemy row's), None for those it lacks."""
        if isinstance(row, cls):
            return row
        return cls(**values_of(row, columns_of(cls)))

    def columns(self) -> dict[str, Any]:
        """Its columns by name (what a write of the row inserts)."""
        return {k: getattr(self, k) for k in columns_of(type(self))}


def values_of(row: Row | Mapping, names: tuple[str, ...]) -> dict[str, Any]:
    """The columns ``names`` of a row or a mapping, None for those it lacks."""
    if isinstance(row, Mapping):
        return {k: row.get(k) for k in names}
    return {k: getattr(row, k, None) for k in names}



@dataclass(frozen=True, eq=False)
class AttemptRow(Row):
    """One claim of a match: who played it, how it ended and why."""
    id: int
    match_id: str
    season: str
    attempt: int
    worker: str | None
    started_at: float
    ended_at: float | None
    outcome: str
    reason: str | None


# -- seasons ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SeasonSecret:
    """A season's secret, and whether its organiser gave it (else it was drawn)."""
    secret: str
    given: bool


@dataclass(frozen=True, slots=True)
class SeasonCancel:
    """When a season was cancelled, and by whom (None: not said)."""
    cancelled_at: float
    by: str | None


@dataclass(frozen=True, slots=True)
class Cancelling:
    """What one call cancelling a season changed: ``already`` (it was cancelled before), its
    cancel, the matches it cancelled (``pending``, ``abandoned``: running with an expired
    lease) and those left ``running`` and ``done``."""
    already: bool
    cancelled_at: float
    by: str | None
    pending: int
    abandoned: int
    running: int
    done: int


@dataclass(frozen=True, slots=True)
class StatusCounts:
    """Matches counted by status."""
    pending: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    cancelled: int = 0

    @classmethod
    def of(cls, pairs) -> "StatusCounts":
        """The counts of (status, count) pairs."""
        return cls(**dict(pairs))

    def __getitem__(self, status: str) -> int:
        return getattr(self, str(status))

    def items(self):
        """(status, count) of each status, in ``STATUSES`` order."""
        return [(s, getattr(self, s)) for s in STATUSES]

    def to_dict(self) -> dict[str, int]:
        """{status: count}, as the JSON of the API shows them."""
        return dict(self.items())

    @property
    def total(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self))


# -- the registry -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BotOwner:
    """A bot name of the registry and its owner, the author of its first version (None: the
    organiser)."""
    name: str
    owner: str | None


@dataclass(frozen=True, slots=True)
class VersionRemoval:
    """What removing a bot version did: ``removed``; ``seasons``, those pinning its content
    (nothing removed); ``archive_removed``, no other version shared its archive."""
    removed: bool
    seasons: tuple[str, ...] = ()
    archive_removed: bool = False


# -- the submission service ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AuthorRow:
    """An author: role (``author`` or ``organiser``), status and when they were changed."""
    name: str
    role: str
    status: str
    created_at: float
    changed_at: float | None


@dataclass(frozen=True, slots=True)
class VersionStateRow:
    """Where a version the service took in stands (``VERSION_STATES``)."""
    version_id: int
    state: str
    reason: str | None
    build_log: str | None
    claimed_by: str | None
    updated_at: float
    sent_at: float | None
    withdrawn_at: float | None


@dataclass(frozen=True, slots=True)
class IntakeItem:
    """A version on its way to ready, as the dispatch orders them; ``sent``: its message is
    believed to be in the queue."""
    version_id: int
    author: str | None
    state: str
    sent: bool


@dataclass(frozen=True, slots=True)
class ReadyVersion:
    """A ready version of the service: its id, name@version and when it was made ready."""
    version_id: int
    name: str
    version: str
    updated_at: float


@dataclass(frozen=True, slots=True)
class QueuedVersion:
    """A version not yet ready or refused, with its name and who builds it."""
    name: str
    version: str
    author: str | None
    state: str
    claimed_by: str | None
    updated_at: float


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A live dashboard session: its author, their role and status, its CSRF token."""
    author: str
    csrf: str
    expires_at: float
    role: str
    status: str


@dataclass(frozen=True, slots=True)
class ScrimmageRow:
    """A scrimmage: ``bot`` against ``opponent`` over ``pairs`` duplicate pairs; ``season``
    the season that plays it once it is sent (``SCRIMMAGE_STATES``)."""
    id: int
    author: str
    bot: str
    opponent: str
    opponent_author: str | None
    pairs: int
    variant: str
    season: str | None
    state: str
    reason: str | None
    created_at: float
    updated_at: float
    sent_at: float | None
    kind: str = ScrimmageKind.SCRIMMAGE
    elo0: float | None = None       # an A/B test's bounds (null until the service sets them)
    elo1: float | None = None
    alpha: float | None = None
    beta: float | None = None
    wins: int | None = None         # where its test stands: the pairs it took, in order
    draws: int | None = None
    losses: int | None = None
    llr: float | None = None
    verdict: str | None = None      # ``SprtState.verdict`` once it is over


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the audit log."""
    id: int
    at: float
    actor: str | None
    action: str
    subject: str | None
    detail: str | None
    address: str | None


# -- the ladder ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LadderEntryRow:
    """A bot on a ladder: its author (None: the organiser's), when it joined and retired."""
    season: str
    bot: str
    author: str | None
    joined_at: float
    retired_at: float | None


@dataclass(frozen=True, slots=True)
class RatingRow:
    """A bot's rating after a ladder's pair ``cluster`` (its ``pair_index``-th rated)."""
    season: str
    cluster: str
    bot: str
    pair_index: int
    mu: float
    sigma: float
    pairs: int
    at: float


# -- pages --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SealedResult:
    """A played match whose record is sealed, and the bots in its seats."""
    id: str
    seats: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SealingMatch:
    """A match not over yet that keeps another's record sealed; ``mirror``: its duplicate
    mirror."""
    id: str
    status: str
    mirror: bool


@dataclass(frozen=True, slots=True)
class MatchPage:
    """A page of matches: how many the filters select, and the rows asked for (each a
    ``MatchResultRow``)."""
    total: int
    rows: tuple


@dataclass(frozen=True, slots=True)
class ResultPace:
    """When a season's results were written: how many, the first and the last; and how many
    within the recent window, the first of them."""
    count: int
    first: float | None
    last: float | None
    recent: int
    recent_first: float | None


def deal_seeds(spec: dict) -> frozenset[str]:
    """The seeds of the cards a match of ``spec`` (a stored ``MatchSpec``) deals."""
    return (frozenset(d["seed"] for d in spec.get("deals") or [])
            or frozenset((str(spec.get("seed")),)))
