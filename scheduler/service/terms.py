"""What the service's answers and the clients that read them share: what a queued version
waits behind in words, the most matches one answer gives and a downloaded record's file name.
Standard library only (the participant's client carries it)."""

from __future__ import annotations

import re

from scheduler.states import VersionState

MAX_PAGE = 500
"""The most matches of a season the API gives in one answer."""


def ahead_text(ahead: dict[str, int] | None) -> str:
    """What a queued version waits behind, in words ("2 versions ahead of it, 1 being
    built"); "" when it is not queued."""
    if ahead is None:
        return ""
    n = sum(ahead.values())
    if not n:
        return "next for a worker"
    doing = [f"{ahead[k]} being {what}" for k, what in (
        (VersionState.BUILDING, "built"), (VersionState.CHECKING, "checked")) if ahead[k]]
    return ", ".join([f"{n} version{'s' if n != 1 else ''} ahead of it", *doing])


def record_file_name(match_id: str) -> str:
    """A downloaded record's file name: the match id, of plain characters only."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", match_id)[:120].lstrip(".") + ".json"
