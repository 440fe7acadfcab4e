"""Which versions may play: the ready ones, and the house bots (the organiser's) among them."""

from __future__ import annotations

from scheduler.states import VersionState


def house_bots(store, *, besides: str | None = None) -> list:
    """The house bots: the organiser's versions (stored with no author, or by an organiser)
    that are ready and not withdrawn, but for content hash ``besides``; oldest first."""
    organisers = {a.name for a in store.authors.all() if a.role == "organiser"}
    return ready_of(store, [r for r in store.registry.versions()
                            if (r.author is None or r.author in organisers)
                            and r.content_hash != besides])


def ready_of(store, rows: list) -> list:
    """The registry ``rows`` that are ready and not withdrawn (a version stored before the
    service, with no state, is ready)."""
    states = {s.version_id: s for s in store.versions.states([r.id for r in rows])}
    return [r for r in rows if (st := states.get(r.id)) is None
            or (st.state == VersionState.READY and st.withdrawn_at is None)]
