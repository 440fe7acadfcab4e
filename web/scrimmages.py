"""Scrimmages through the service: an author asks for N duplicate pairs of their ready version
against another ready version (another author's, or the organiser's house bots); the workers
play them below the seasons' priority on secret deals (``scheduler.intake``); the result is
shown to the requester and to the opponent's author, and counts for no standings."""

from __future__ import annotations

from scheduler.registry.archives import RegistryError
from web.results import match_lines
from web.service import Refused, ServiceConfig, Viewer


def _version(store, ref: str, what: str, *, playable: bool = False):
    from scheduler.registry.submissions import resolve
    if not isinstance(ref, str) or not 3 <= len(ref) <= 200 or ref.count("@") != 1:
        raise Refused(400, f"{what}: expected name@version")
    try:
        return resolve(store, ref, playable=playable)
    except RegistryError as e:
        raise Refused(400, f"{what}: {e}") from None


def _opponent(store, ref: str):
    """The opponent, a ready version; refused in the same words whatever it is not (missing,
    queued, refused, withdrawn), so that no author learns another's state or reason here."""
    try:
        return _version(store, ref, "opponent", playable=True)
    except Refused:
        raise Refused(400, f"opponent: {ref!r} is not a ready version (name@version of a "
                      "version that passed its check)") from None


def request(store, config: ServiceConfig, viewer: Viewer, bot: str, opponent: str, pairs: int,
            *, address: str | None = None) -> dict:
    lim = config.limits
    if not isinstance(pairs, int) or isinstance(pairs, bool) or \
            not 1 <= pairs <= lim.scrimmage_pairs:
        raise Refused(400, f"pairs: expected an integer from 1 to {lim.scrimmage_pairs}")
    mine = _version(store, bot, "bot")
    if mine.author != viewer.name and not viewer.organiser:
        raise Refused(403, f"bot: {mine.ref} is not yours; a scrimmage is asked for by the "
                      "author of its first bot")
    mine = _version(store, bot, "bot", playable=True)  # (its state and reason: the author's)
    theirs = _opponent(store, opponent)
    if theirs.ref == mine.ref:
        raise Refused(400, "opponent: a version against itself tells nothing")
    if store.scrimmages_in_flight(viewer.name) >= lim.scrimmages_in_flight:
        store.audit("limit", actor=viewer.name, detail="scrimmages in flight", address=address)
        raise Refused(429, f"limit reached: {lim.scrimmages_in_flight} of your scrimmages are "
                      "queued or playing; it resets when one of them ends", 30.0)
    sid = store.add_scrimmage(author=viewer.name, bot=mine.ref, opponent=theirs.ref,
                              opponent_author=theirs.author, pairs=pairs,
                              variant=config.variant)
    store.audit("scrimmage", actor=viewer.name, subject=f"scrimmage {sid}",
                detail=f"{mine.ref} v {theirs.ref}, {pairs} pairs", address=address)
    return view(store, viewer, sid)


def _visible(store, viewer: Viewer, sid: int) -> dict:
    s = store.scrimmage(sid)
    if s is None:
        raise Refused(404, f"no scrimmage {sid}")
    if not viewer.organiser and viewer.name not in (s["author"], s["opponent_author"]):
        raise Refused(403, f"scrimmage {sid} is not yours: it is shown to its two authors only")
    return s


def view(store, viewer: Viewer, sid: int) -> dict:
    """A scrimmage: its state, its matches' counts and, from its scored pairs, the requester's
    bot's points (win 1, draw 0.5 a pair) and mean paired difference per deal; each match, in
    play order, with the requester's bot's result (``web.results.match_line``)."""
    s = _visible(store, viewer, sid)
    out = {k: s[k] for k in ("id", "author", "bot", "opponent", "opponent_author", "pairs",
                             "variant", "state", "reason", "created_at", "updated_at",
                             "season")}
    out.update(matches={}, pairs_scored=0, points=None, mean_diff=None, match_ids=[],
               results=[])
    if s["season"]:
        out["matches"] = store.counts(s["season"])
        scored = store.pair_scores(s["season"])
        if scored:
            points = [p.score_a if p.bot_a == s["bot"] else 1 - p.score_a for p in scored]
            diffs = [p.diff_a if p.bot_a == s["bot"] else -p.diff_a for p in scored]
            out.update(pairs_scored=len(scored), points=sum(points),
                       mean_diff=round(sum(diffs) / len(diffs), 4))
        rows = store.matches(s["season"])
        out["match_ids"] = [m.id for m in rows]
        out["results"] = match_lines(store, rows, {s["bot"]})
    return out


def listing(store, viewer: Viewer) -> list[dict]:
    rows = store.scrimmages_of(None if viewer.organiser else viewer.name)
    return [view(store, viewer, s["id"]) for s in rows]


def cancel(store, viewer: Viewer, sid: int, *, address: str | None = None) -> dict:
    """Only its requester (or the organiser) cancels a scrimmage."""
    s = _visible(store, viewer, sid)
    if s["author"] != viewer.name and not viewer.organiser:
        raise Refused(403, f"scrimmage {sid} was asked for by another author: only they "
                      "cancel it")
    if store.set_scrimmage(sid, expect=("queued", "playing"), state="cancelled",
                           reason=f"cancelled by {viewer.name}"):
        if s["season"]:
            store.cancel_season(s["season"], by=viewer.name)
        store.audit("scrimmage-cancel", actor=viewer.name, subject=f"scrimmage {sid}",
                    address=address)
    return view(store, viewer, sid)
