"""The fixed sets of states the scheduler keeps: a match's status, an attempt's outcome, what
playing a match came to, a service version's and a scrimmage's state, an author's status and a
worker's. Each is a ``StrEnum``: a member equals its text, so the store's columns, the JSON of
the API and the pages hold the same words as before. Code outside this module names members,
never the words (``tests/house/test_structure.py`` and ``tools/status_literals.py`` check it).
Standard library only (the participant's client carries it)."""

from __future__ import annotations

from enum import StrEnum


class MatchStatus(StrEnum):
    """A match's status in the store (``matches.status``)."""

    PENDING = "pending"
    """Waiting to be played: never claimed, or handed back for another attempt."""
    RUNNING = "running"
    """Claimed by a worker that holds its lease."""
    DONE = "done"
    """Played and its result stored: counted once."""
    FAILED = "failed"
    """Set aside: the infrastructure failed it ``max_attempts`` times (no bot is charged)."""
    CANCELLED = "cancelled"
    """Of a cancelled season, never played (or given up in play)."""


MATCH_OPEN = (MatchStatus.PENDING, MatchStatus.RUNNING)
"""The statuses of a match still to be played or in play."""
FINISHED = (MatchStatus.DONE, MatchStatus.FAILED, MatchStatus.CANCELLED)
"""The final statuses of a match."""


class AttemptOutcome(StrEnum):
    """How one claim of a match ended (``attempts.outcome``)."""

    RUNNING = "running"
    """Still in play."""
    DONE = "done"
    """Its result was stored."""
    COUNTED = "counted"
    """Another attempt's result was written first: this one counts for nothing."""
    RETRY = "retry"
    """It produced no record; the match is played again on the same cards."""
    FAILED = "failed"
    """It produced no record and was the last attempt allowed: the match is set aside."""
    LOST = "lost"
    """Its worker stopped renewing the lease, or is gone."""
    INTERRUPTED = "interrupted"
    """A local run was stopped: handed back uncharged."""
    CANCELLED = "cancelled"
    """Its season was cancelled while it was given back or abandoned."""


class PlayOutcome(StrEnum):
    """What one call to play a match came to (``scheduler.execute.execute_match``)."""

    DONE = "done"
    """Played and stored."""
    COUNTED = "counted"
    """Played, but another attempt's result was stored first."""
    BUSY = "busy"
    """Leased by another worker that is alive: left to it."""
    HANDED_BACK = "handed back"
    """This process was told to stop: the match went back to the queue, uncharged."""
    RETRY = "retry"
    """The infrastructure failed this attempt: the match waits for another."""
    FAILED = "failed"
    """Set aside after its last attempt, or found so."""
    CANCELLED = "cancelled"
    """Its season was cancelled."""


class VersionState(StrEnum):
    """A version the submission service took in (``version_states.state``), in order."""

    QUEUED = "queued"
    """Waiting for a worker to build and check it."""
    BUILDING = "building"
    """A worker is building it in the sandbox."""
    CHECKING = "checking"
    """Built; a worker plays its admission check."""
    READY = "ready"
    """Passed: ladders, scrimmages and seasons may name it."""
    REFUSED = "refused"
    """Its build or check failed (final); the reason says why."""
    SUSPENDED = "suspended"
    """It kept forfeiting matches (the crash limit) until the organiser lifts it."""


IN_FLIGHT = (VersionState.QUEUED, VersionState.BUILDING, VersionState.CHECKING)
"""The states of a version still on its way to ready or refused."""


class ScrimmageState(StrEnum):
    """A scrimmage's state (``scrimmages.state``); done, failed and cancelled are final."""

    QUEUED = "queued"
    """Asked for; its season not opened yet."""
    PLAYING = "playing"
    """Its season is open and its matches are played."""
    DONE = "done"
    """Every match is over, at least one played."""
    FAILED = "failed"
    """It could not be opened, or no match of it could be played."""
    CANCELLED = "cancelled"
    """Its author or the organiser cancelled it."""


SCRIMMAGE_OPEN = (ScrimmageState.QUEUED, ScrimmageState.PLAYING)
"""The states of a scrimmage not over yet."""


class ScrimmageKind(StrEnum):
    """What a scrimmage row plays (``scrimmages.kind``)."""

    SCRIMMAGE = "fixed-pairs"
    """The pairs its author asked for."""
    AB = "ab-test"
    """An A/B test its author asked for: pairs until a sequential test decides whether
    ``bot`` is stronger than ``opponent``."""
    NEW_VERSION = "new-version"
    """The A/B test of a version that became ready against its author's previous ready
    version of the bot, asked for by the arena."""


AB_KINDS = (ScrimmageKind.AB, ScrimmageKind.NEW_VERSION)
"""The kinds of scrimmage rows that are A/B tests."""


class AbVerdict(StrEnum):
    """Where an A/B test stands, as its author reads it (``SprtState.verdict``)."""

    RUNNING = "running"
    """Its test has not decided yet."""
    STRONGER = "stronger"
    """H1 accepted: at least elo1 stronger."""
    NOT_STRONGER = "not stronger"
    """H0 accepted: at most elo0 stronger."""
    AT_LIMIT = "stopped at the pair limit"
    """No decision within the pairs allowed."""


class HumanGameState(StrEnum):
    """A person's game in the browser (``human_games.state``); over and failed are final."""

    STARTING = "starting"
    """Its bots are being built and started."""
    PLAYING = "playing"
    """The referee plays it."""
    OVER = "over"
    """Played to its end; its record is kept."""
    FAILED = "failed"
    """It could not be played to its end (the reason says why); no record."""


HUMAN_OPEN = (HumanGameState.STARTING, HumanGameState.PLAYING)
"""The states of a person's game not over yet."""


class SeasonState(StrEnum):
    """A season's state in a word or two, as ``arena seasons`` and the dashboard show it
    (``scheduler.reports.season_status``): worked out from its matches, never stored."""

    PLAYING = "playing"
    """Matches are played, or waiting to be."""
    FINISHED = "finished"
    """Every match is over (a ladder never is)."""
    NOT_STARTED = "not started"
    """No match is over or in play yet (a ladder: none played)."""
    RESTING = "resting"
    """A ladder with nothing in play: waiting for versions or its next pairs."""
    CANCELLING = "cancelling"
    """Cancelled, with matches still in play (shown with how many)."""
    CANCELLED = "cancelled"
    """Cancelled, nothing left in play."""


class AuthorStatus(StrEnum):
    """An author's status (``authors.status``)."""

    ACTIVE = "active"
    """May log in, submit and play."""
    PENDING = "pending"
    """Registered alone, waiting for the organiser's approval."""
    DISABLED = "disabled"
    """No login nor write; the author's versions stay."""


class WorkerState(StrEnum):
    """A worker's state in its heartbeat (``scheduler.workers``)."""

    RUNNING = "running"
    """Taking matches."""
    STOPPING = "stopping"
    """Told to stop: finishing or handing back its matches."""
