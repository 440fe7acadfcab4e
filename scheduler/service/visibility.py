"""Who sees what: an author sees their own versions' private side (state, build log,
archive), their own seats' logs and the scrimmages they are in; the organiser sees all; the
public sees no scrimmage. Everything else is refused in words that tell nothing of others."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.errors import Refusal, Refused
from scheduler.registry.archives import RegistryError
from scheduler.registry.owners import check_author, check_version


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is asking: an active author, by token (``token``) or dashboard session."""
    name: str
    role: str
    via: str
    csrf: str | None = None

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"


def owned(store, viewer: Viewer, name: str, version: str):
    """name@version, when the viewer may see its private side (theirs, or the organiser)."""
    try:
        check_author(name, "bot")
        check_version(version, "bot")
    except RegistryError as e:
        raise Refused(Refusal.MALFORMED, str(e)) from None
    row = store.registry.version(name, version)
    if row is None:
        raise Refused(Refusal.NOT_FOUND, f"no version {name}@{version}")
    if not viewer.organiser and row.author != viewer.name:
        raise Refused(Refusal.FORBIDDEN,
                      f"{name}@{version} is not yours: only its author sees its state, "
                      "build log, archive and logs")
    return row



def seat_authors(store, match_id: str) -> tuple[object, list[str | None]]:
    """A match and the author of each seat's version (None: the organiser's or unknown)."""
    from scheduler.reports import bot_versions
    m = store.pages.match(match_id)
    if m is None:
        raise Refused(Refusal.NOT_FOUND, f"no match {match_id!r}")
    refs = bot_versions(store, m.season)
    out = []
    for bot in m.seats:
        ref = refs.get(bot, {}).get("ref", "")
        name, _, version = ref.partition("@")
        row = store.registry.version(name, version) if version else None
        out.append(row.author if row is not None else None)
    return m, out


def own_seats(store, viewer: Viewer | None, match_id: str) -> set[int]:
    """The seats of a match whose logs the viewer may read."""
    if viewer is None:
        return set()
    m, authors = seat_authors(store, match_id)
    return {i for i, a in enumerate(authors) if viewer.organiser or a == viewer.name}


def seat_log(store, viewer: Viewer, match_id: str, seat: int) -> str:
    """The log a seat's bot wrote in a match: its author's (or the organiser's) only, once
    the match's record may be served."""
    if seat not in range(4):
        raise Refused(Refusal.MALFORMED, f"seat {seat}: expected 0 to 3")
    if seat not in own_seats(store, viewer, match_id):
        raise Refused(Refusal.FORBIDDEN,
                      f"seat {seat} of match {match_id} is not your bot's: only its "
                      "author sees its log")
    if store.pages.sealed_by(match_id):
        raise Refused(Refusal.FORBIDDEN, "the match's record is sealed until its mirror is played")
    record = store.results.record(match_id)
    if record is None:
        raise Refused(Refusal.NOT_FOUND, f"match {match_id} has no record yet")
    return (record.extra.get("bot_logs") or {}).get(str(seat), "")


def hidden_seasons(store, viewer: Viewer | None) -> set[str]:
    """The scrimmage seasons the viewer is not in (all of them, to the public)."""
    if viewer is not None and viewer.organiser:
        return set()
    mine = {s.season for s in store.scrimmages.of(viewer.name)} if viewer else set()
    return store.scrimmages.seasons() - mine
