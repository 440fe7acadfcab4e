"""An author's versions as the service shows them: each one's state and why, what a queued
one waits behind, its build log and its stored archive; only the viewer's own (the organiser:
every one; ``visibility.owned``)."""

from __future__ import annotations

from scheduler.errors import Refusal, Refused
from scheduler.service.visibility import Viewer, owned
from scheduler.states import VersionState


def version_view(store, viewer: Viewer, name: str, version: str) -> dict:
    """A version's state as its author sees it."""
    row = owned(store, viewer, name, version)
    st = store.versions.state(row.id)
    return {"name": row.name, "version": row.version, "author": row.author,
            "content_hash": row.content_hash, "language": row.language, "size": row.size,
            "files": row.files, "submitted_at": row.submitted_at,
            "state": st.state if st else VersionState.READY,
            "reason": st.reason if st else None,
            "updated_at": st.updated_at if st else row.submitted_at,
            "withdrawn": bool(st and st.withdrawn_at),
            "has_build_log": bool(st and st.build_log),
            "seasons": store.registry.pinning_seasons(row.content_hash),
            "ahead": _ahead(store, row.id) if st and st.state == VersionState.QUEUED else None,
            "ab": ab_tests(store, row.ref)}


def ab_tests(store, ref: str) -> list[dict]:
    """The A/B tests of version ``ref``, newest first (``scheduler.service.ab.view``; its
    verdict against its predecessor among them)."""
    from scheduler.service.ab import view
    return [{"id": t.id, "state": t.state, **(view(t) or {})}
            for t in store.scrimmages.tests_of(ref)]


def seasons_of(store, row, season: str | None = None) -> list[str]:
    """The seasons (and ladders) that pinned registry version ``row``, its scrimmages and A/B
    tests apart; ``season``: that one only, refused unless it is one of them."""
    scrimmages = store.scrimmages.seasons()
    seasons = [s for s in store.registry.pinning_seasons(row.content_hash) if s not in scrimmages]
    if season is None:
        return seasons
    if season not in seasons:
        raise Refused(Refusal.NOT_FOUND, f"{row.ref} plays in no season {season!r}")
    return [season]


def _ahead(store, version_id: int) -> dict[str, int]:
    from scheduler.dispatch import RESEND_S, ahead_in_intake
    from scheduler.service.intake import STALE_CLAIM_S
    return ahead_in_intake(store.versions.intake_queue(RESEND_S, STALE_CLAIM_S), version_id)


def my_versions(store, viewer: Viewer) -> list[dict]:
    """The viewer's versions (the organiser's: every one), newest first."""
    rows = [r for r in store.registry.versions() if viewer.organiser or r.author == viewer.name]
    return [version_view(store, viewer, r.name, r.version) for r in reversed(rows)]


def build_log(store, viewer: Viewer, name: str, version: str) -> str:
    """The end of a version's build log, as its worker kept it; "" before its build."""
    row = owned(store, viewer, name, version)
    st = store.versions.state(row.id)
    return (st.build_log if st else None) or ""


def archive(store, viewer: Viewer, name: str, version: str) -> bytes:
    """A version's canonical tar, as stored."""
    from scheduler.registry.archives import stored_archive
    row = owned(store, viewer, name, version)
    return stored_archive(store, row.content_hash)
