"""What an author sees of their own results, on their pages, the API and the command line:
for each season (or ladder) a version plays in, its rating and rank there, its pairs, and its
matches newest first (opponents, its team's result, links to the match, its replay and its
record); a scrimmage's matches told the same way (``web.scrimmages``); and the record of a
match one of their versions played, to download. Nothing of another author's version: the
caller has checked the version is the viewer's (``scheduler.service.visibility.owned``), and
a record is served only for a match with one of the viewer's versions in a seat, with the
other seats' bot logs left out."""

from __future__ import annotations

import json
from urllib.parse import quote

from fastapi.responses import Response

from scheduler.errors import Refusal, Refused
from scheduler.ladder import ladder_places
from scheduler.reports import bot_versions, sealed_reason
from scheduler.season_config import SeasonConfig
from scheduler.stats.scores import match_tally
from scheduler.service.terms import record_file_name
from scheduler.service.versions import seasons_of
from scheduler.service.visibility import Viewer, own_seats, owned

#: matches of a season shown at once (the page's "older" link and the API's offset go on)
PAGE = 20


def match_line(r, bots, sealed: bool) -> dict:
    """A match (a ``MatchResultRow``) as the author of ``bots`` (its seats' names there) reads
    it: the opponents, and once played and no longer sealed, its team's result: ``score`` (1 a
    win, 0.5 a draw, 0 a loss), ``outcome``, ``net`` levels, ``points`` taken attacking and
    whether it forfeited."""
    seats = list(r.seats)
    mine = [i for i, b in enumerate(seats) if b in bots]
    team = mine[0] % 2 if mine else 0
    path = quote(r.id, safe="")
    out = {"id": r.id, "season": r.season, "status": r.status, "finished_at": r.finished_at,
           "seats": seats, "team": team,
           "opponents": list(dict.fromkeys(b for i, b in enumerate(seats) if i % 2 != team)),
           "sealed": bool(r.played and sealed), "score": None, "outcome": None, "net": None,
           "points": None, "forfeit": None, "match_url": f"/matches/{path}",
           "replay_url": None, "record_url": None}
    if r.played and not sealed:
        tally = r if r.deal_count is not None else match_tally(r.summary, r.variant)
        score = getattr(tally, f"score_{team}")
        out.update(score=score, net=getattr(tally, f"net_{team}"),
                   points=getattr(tally, f"attack_points_{team}"),
                   outcome="win" if score > 0.5 else "loss" if score < 0.5 else "draw",
                   forfeit=tally.forfeit_team == team,
                   replay_url=f"/matches/{path}/replay",
                   record_url=f"/api/v1/matches/{path}/record")
    return out


def match_lines(store, rows, bots) -> list[dict]:
    """``match_line`` of each row, the sealed ones told in one read a season."""
    rows = list(rows)
    sealed = store.pages.sealed_among([r for r in rows if r.played])
    return [match_line(r, bots, r.id in sealed) for r in rows]


def _rank(store, season: str, config: SeasonConfig, bots: list[str],
          standings: dict) -> dict:
    """The version's rating and rank in the season: a ladder's openskill rating (mu, its
    interval mu +- 2 sigma, as ``scheduler.ladder.ladder_table``), else its Bradley-Terry
    standings line; its pairs; None for the rank before it has played."""
    lines = standings["bots"]
    line = next((b for b in lines if b["name"] in bots), None)
    out = {"rank": None, "of": len(lines), "rating": None, "low": None, "high": None,
           "mu": None, "sigma": None, "pairs": 0, "wins": 0, "draws": 0, "losses": 0,
           "points": 0.0, "net_levels": 0, "retired": False}
    if line is not None:
        out.update({k: line[k] for k in ("wins", "draws", "losses", "net_levels")},
                   points=line["wins"] + line["draws"] / 2,
                   pairs=line["pairs_won"] + line["pairs_drawn"] + line["pairs_lost"])
    if config.is_ladder:
        from scheduler.ladder import ladder_table
        table = ladder_table(store, season)
        at = next((i for i, v in enumerate(table) if v["bot"] in bots), None)
        out["of"] = sum(v["retired_at"] is None for v in table)  # the versions in it now
        if at is not None:
            v = table[at]
            ranked = v["pairs"] and v["retired_at"] is None  # (retired ones: after all)
            out.update(rank=at + 1 if ranked else None, rating=v["mu"], mu=v["mu"],
                       sigma=v["sigma"], low=v["low"], high=v["high"], pairs=v["pairs"],
                       retired=v["retired_at"] is not None)
    elif line is not None and line["matches"]:
        out.update(rank=lines.index(line) + 1, rating=line["rating"], low=line["low"],
                   high=line["high"])
    return out


def version_results(request, viewer: Viewer, name: str, version: str, *,
                    season: str | None = None, limit: int = PAGE, offset: int = 0) -> dict:
    """The results of the viewer's ``name@version`` in each season that pinned it (its
    scrimmages apart), or in ``season`` only; the seasons' standings are the app's
    (``web.api.standings``, kept between requests), which count no sealed match: nor do its
    rank, rating and tallies here, and ``matches.sealed`` says how many of its played matches
    wait so."""
    from web.api import sealed_in, standings
    store = request.app.state.store
    row = owned(store, viewer, name, version)
    seasons = seasons_of(store, row, season)
    out = []
    for s in seasons:
        config = store.seasons.get(s).config
        bots = [b for b, v in bot_versions(store, s).items() if v["hash"] == row.content_hash]
        rank = _rank(store, s, config, bots, standings(request, s))
        waiting = sum(1 for seats in sealed_in(request, s).values() if set(seats) & set(bots))
        page = store.pages.seated_page(s, bots, limit=limit, offset=offset)
        out.append({"season": s, "format": config.format.value,
                    "variant": config.variant, "bots": bots, **rank,
                    "matches": {"total": page.total, "limit": limit, "offset": offset,
                                "counts": store.pages.seated_counts(s, bots).to_dict(),
                                "sealed": waiting,
                                "rows": match_lines(store, page.rows, set(bots))}})
    return {"version": f"{name}@{version}", "seasons": out,
            "ladders": ladder_places(store, [f"{name}@{version}"])[f"{name}@{version}"]}


def own_record(store, viewer: Viewer, match_id: str) -> bytes:
    """The record of a match one of the viewer's versions played (the organiser: any), as JSON
    (what ``arena replay FILE`` reads), the bot logs of the other seats left out. Another
    author's match, one not played and one that is not there answer the same 404; a record
    still sealed (its mirror, or another match on its cards, not yet played), 403."""
    missing = Refused(Refusal.NOT_FOUND, f"no match record {match_id!r} of your bots")
    try:
        seats = own_seats(store, viewer, match_id)
    except Refused:
        raise missing from None
    record = store.results.record(match_id) if seats else None
    if record is None:
        raise missing
    sealed = store.pages.sealed_by(match_id)
    if sealed:
        raise Refused(Refusal.FORBIDDEN, f"match {match_id}: {sealed_reason(sealed)}")
    return json.dumps(redacted(record.to_dict(), seats), ensure_ascii=False).encode()


def download(store, viewer: Viewer, match_id: str) -> Response:
    """``own_record`` as a file to save, named by ``record_file_name``."""
    return Response(own_record(store, viewer, match_id), media_type="application/json",
                    headers={"Content-Disposition":
                             f'attachment; filename="{record_file_name(match_id)}"'})


def redacted(record: dict, seats: set[int]) -> dict:
    """The record without the logs of the bots in the seats not in ``seats``."""
    out = dict(record)
    for key in ("bot_logs", "bot_log_bytes"):
        if isinstance(out.get(key), dict):
            out[key] = {s: v for s, v in out[key].items() if s.isdigit() and int(s) in seats}
    if isinstance(out.get("faults"), list):
        out["faults"] = [f if not isinstance(f, dict) or f.get("seat") in seats else
                         {k: v for k, v in f.items() if k != "log_tail"}
                         for f in out["faults"]]
    return out
