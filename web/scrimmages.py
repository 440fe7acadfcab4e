"""Scrimmages through the service, as an author sees them: what they asked for, its state,
its matches and the requester's bot's results. The rules (who may ask, within which limits,
who sees and cancels one) are the domain's, ``scheduler.service.scrimmages``."""

from __future__ import annotations

from scheduler.service import ab
from scheduler.service import scrimmages as rules
from scheduler.service.config import ServiceConfig
from scheduler.service.visibility import Viewer
from web.results import match_lines


def request(store, config: ServiceConfig, viewer: Viewer, bot: str, opponent: str, pairs: int,
            *, address: str | None = None, sprt: bool = False) -> dict:
    """Ask for a scrimmage (``rules.ask``, within the service's limits and variant), or with
    ``sprt`` an A/B test (``ab.ask``: pairs until its test decides); its view."""
    if sprt:
        sid = ab.ask(store, config.limits, config.ab, config.variant, viewer, bot, opponent,
                     address=address)
    else:
        sid = rules.ask(store, config.limits, config.variant, viewer, bot, opponent, pairs,
                        address=address)
    return view(store, viewer, sid)


def view(store, viewer: Viewer, sid: int) -> dict:
    """A scrimmage: its state, its matches' counts and, from its scored pairs, the requester's
    bot's points (win 1, draw 0.5 a pair) and mean paired difference per deal; each match, in
    play order, with the requester's bot's result (``web.results.match_line``)."""
    s = rules.visible(store, viewer, sid)
    out = {k: getattr(s, k) for k in ("id", "author", "bot", "opponent", "opponent_author",
                                      "pairs", "variant", "state", "reason", "created_at",
                                      "updated_at", "season", "kind")}
    out["ab"] = ab.view(s)
    out.update(matches={}, pairs_scored=0, points=None, mean_diff=None, match_ids=[],
               results=[])
    if s.season:
        out["matches"] = store.seasons.counts(s.season).to_dict()
        scored = store.results.pair_scores(s.season)
        if scored:
            points = [p.score_a if p.bot_a == s.bot else 1 - p.score_a for p in scored]
            diffs = [p.diff_a if p.bot_a == s.bot else -p.diff_a for p in scored]
            out.update(pairs_scored=len(scored), points=sum(points),
                       mean_diff=round(sum(diffs) / len(diffs), 4))
        rows = store.pages.matches(s.season)
        out["match_ids"] = [m.id for m in rows]
        out["results"] = match_lines(store, rows, {s.bot})
    return out


def listing(store, viewer: Viewer) -> list[dict]:
    rows = store.scrimmages.of(None if viewer.organiser else viewer.name)
    return [view(store, viewer, s.id) for s in rows]


def cancel(store, viewer: Viewer, sid: int, *, address: str | None = None) -> dict:
    """Cancel a scrimmage (``rules.cancel``: its requester or the organiser); its view."""
    rules.cancel(store, viewer, sid, address=address)
    return view(store, viewer, sid)
