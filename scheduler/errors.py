"""The scheduler's errors: one base, ``ArenaError``, and one class per cause under it.

A user, an author or an organiser is told what an ``ArenaError`` says; anything else is a bug.
The family, each defined beside the code that raises it:

- ``scheduler.season.SeasonError``: a season or ladder file, or a season in the store, that
  cannot be run as given (names the file, the field and what was expected);
- ``scheduler.registry.archives.RegistryError`` (and ``NotPortable``) and
  ``scheduler.registry.versions.BuildError``: a bot version that cannot be stored, placed or
  built;
- ``scheduler.store.StoreError`` (and ``NoStore``), ``scheduler.execute.StoreUnavailable``
  and ``scheduler.migrations.StoreVersionError``: a store that is missing, unreachable or of
  another version;
- ``scheduler.execute.MatchFailed``: a match the infrastructure could not play;
- ``Refused`` (here): what the service refuses an author, for a ``Refusal`` (no HTTP status:
  the web edge maps each refusal to one, ``web.refusals``).

Each keeps the built-in base it had (``ValueError``, ``RuntimeError``), so a caller that
catches those still does. Standard library only (the participant's client carries it).
"""

from __future__ import annotations

import enum


class ArenaError(Exception):
    """What the scheduler tells a user of something they gave or asked for."""


class Refusal(enum.Enum):
    """Why the service refuses a request (the web edge gives each its HTTP status)."""
    MALFORMED = "malformed"
    """What was sent is not what was expected: a field, a parameter, an archive."""
    UNAUTHENTICATED = "unauthenticated"
    """No author is known: no token or session, or one that is not an active author's."""
    FORBIDDEN = "forbidden"
    """The author is known but may not do or see this (not theirs, sealed, organisers only)."""
    NOT_FOUND = "not_found"
    """No such thing (or none the author may know of)."""
    TOO_SLOW = "too_slow"
    """The request's body did not arrive in time."""
    TOO_LARGE = "too_large"
    """The request's body or archive is over its limit."""
    CONFLICT = "conflict"
    """It no longer applies: the thing it answers was answered already, or is over."""
    LIMITED = "limited"
    """A limit on how much or how often is reached; ``retry_after`` may say when to retry."""
    FAILED = "failed"
    """The service failed to do it (its fault, not the author's)."""


class Refused(ArenaError):
    """A request refused: why (``kind``), what to tell the author (``detail``), and for a
    limit, the seconds after which to retry (``retry_after``)."""

    def __init__(self, kind: Refusal, detail: str, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.retry_after = kind, detail, retry_after

    def __repr__(self) -> str:
        return f"Refused({self.kind}, {self.detail!r})"
