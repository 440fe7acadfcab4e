"""The rules of scrimmages: an author asks for N duplicate pairs of their ready version
against another ready version (another author's, or the organiser's house bots), within
their limits; a scrimmage is shown to its two authors only, and cancelled by its requester
(or the organiser). The workers open and play it (``scheduler.service.intake``)."""

from __future__ import annotations

from scheduler.errors import Refusal, Refused
from scheduler.registry.archives import RegistryError
from scheduler.service.limits import Limits
from scheduler.service.visibility import Viewer
from scheduler.states import SCRIMMAGE_OPEN, ScrimmageState
from scheduler.store.rows import ScrimmageRow


def version_of(store, ref: str, what: str, *, playable: bool = False):
    from scheduler.registry.submissions import resolve
    if not isinstance(ref, str) or not 3 <= len(ref) <= 200 or ref.count("@") != 1:
        raise Refused(Refusal.MALFORMED, f"{what}: expected name@version")
    try:
        return resolve(store, ref, playable=playable)
    except RegistryError as e:
        raise Refused(Refusal.MALFORMED, f"{what}: {e}") from None


def opponent_of(store, ref: str):
    """The opponent, a ready version; refused in the same words whatever it is not (missing,
    queued, refused, withdrawn), so that no author learns another's state or reason here."""
    try:
        return version_of(store, ref, "opponent", playable=True)
    except Refused:
        raise Refused(Refusal.MALFORMED,
                      f"opponent: {ref!r} is not a ready version (name@version of a "
                      "version that passed its check)") from None


def ask(store, limits: Limits, variant: str, viewer: Viewer, bot: str, opponent: str,
        pairs: int, *, address: str | None = None) -> int:
    """Store a scrimmage of ``viewer``'s version ``bot`` against the ready version
    ``opponent``, ``pairs`` duplicate pairs of ``variant``, within ``limits``; its id."""
    if not isinstance(pairs, int) or isinstance(pairs, bool) or \
            not 1 <= pairs <= limits.scrimmage_pairs:
        raise Refused(Refusal.MALFORMED,
                      f"pairs: expected an integer from 1 to {limits.scrimmage_pairs}")
    mine = version_of(store, bot, "bot")
    if mine.author != viewer.name and not viewer.organiser:
        raise Refused(Refusal.FORBIDDEN,
                      f"bot: {mine.ref} is not yours; a scrimmage is asked for by the "
                      "author of its first bot")
    mine = version_of(store, bot, "bot", playable=True)  # (its state and reason: the author's)
    theirs = opponent_of(store, opponent)
    if theirs.ref == mine.ref:
        raise Refused(Refusal.MALFORMED, "opponent: a version against itself tells nothing")
    within_flight(store, limits, viewer, address)
    sid = store.scrimmages.add(author=viewer.name, bot=mine.ref, opponent=theirs.ref,
                               opponent_author=theirs.author, pairs=pairs,
                               variant=variant)
    store.audit.write("scrimmage", actor=viewer.name, subject=f"scrimmage {sid}",
                      detail=f"{mine.ref} v {theirs.ref}, {pairs} pairs", address=address)
    return sid


def within_flight(store, limits: Limits, viewer: Viewer, address: str | None) -> None:
    """Refuse (audited) one more scrimmage or A/B test of ``viewer``'s past their limit of
    those queued or playing."""
    if store.scrimmages.in_flight(viewer.name) >= limits.scrimmages_in_flight:
        store.audit.write("limit", actor=viewer.name, detail="scrimmages in flight",
                          address=address)
        raise Refused(Refusal.LIMITED,
                      f"limit reached: {limits.scrimmages_in_flight} of your scrimmages and A/B "
                      "tests are queued or playing; it resets when one of them ends", 30.0)


def visible(store, viewer: Viewer, sid: int) -> ScrimmageRow:
    """Scrimmage ``sid``, shown to its two authors (and the organiser) only."""
    s = store.scrimmages.get(sid)
    if s is None:
        raise Refused(Refusal.NOT_FOUND, f"no scrimmage {sid}")
    if not viewer.organiser and viewer.name not in (s.author, s.opponent_author):
        raise Refused(Refusal.FORBIDDEN,
                      f"scrimmage {sid} is not yours: it is shown to its two authors only")
    return s


def cancel(store, viewer: Viewer, sid: int, *, address: str | None = None) -> None:
    """Only its requester (or the organiser) cancels a scrimmage."""
    s = visible(store, viewer, sid)
    if s.author != viewer.name and not viewer.organiser:
        raise Refused(Refusal.FORBIDDEN,
                      f"scrimmage {sid} was asked for by another author: only they "
                      "cancel it")
    if store.scrimmages.change(sid, expect=SCRIMMAGE_OPEN, state=ScrimmageState.CANCELLED,
                               reason=f"cancelled by {viewer.name}"):
        if s.season:
            store.cancels.cancel(s.season, by=viewer.name)
        store.audit.write("scrimmage-cancel", actor=viewer.name, subject=f"scrimmage {sid}",
                          address=address)
