"""The dashboard's server-rendered pages."""

from __future__ import annotations

import json
import time

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from web import api

router = APIRouter(include_in_schema=False)


def _render(request: Request, name: str, code: int = 200, **context) -> HTMLResponse:
    return request.app.state.templates.TemplateResponse(request, name, context,
                                                        status_code=code)


def error_page(request: Request, status: int, detail: str) -> HTMLResponse:
    return _render(request, "error.html", status, status=status, detail=detail)


def when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else ""


def heat(score: float, n: int) -> str:
    """A head-to-head cell's colour: red (lost every unit) through white to green (won all)."""
    if not n:
        return "#eeeeee"
    x = score / n
    r, g = (255, int(255 * x * 2)) if x < 0.5 else (int(255 * (1 - x) * 2), 255)
    return f"rgb({r},{g},{int(255 * (1 - abs(x - 0.5) * 2))})"


@router.get("/", response_class=HTMLResponse)
def index(request: Request):
    return _render(request, "index.html", seasons=api.visible_rows(request), when=when)


@router.get("/seasons/{name}", response_class=HTMLResponse)
def season(request: Request, name: str):
    st = api.standings(request, name)  # (404 for a scrimmage not the viewer's)
    prog = api.progress(request.app.state.store, name)
    lo = min([b["low"] for b in st["bots"]] + [0.0])
    hi = max([b["high"] for b in st["bots"]] + [0.0])
    span = (hi - lo) or 1.0
    bars = {b["name"]: {"left": round((b["low"] - lo) / span * 100, 2),
                        "width": round(max((b["high"] - b["low"]) / span * 100, 0.5), 2),
                        "mark": round((b["rating"] - lo) / span * 100, 2)} for b in st["bots"]}
    names = [b["name"] for b in st["bots"]]
    three_deck = any(b["match_points"] is not None for b in st["bots"])
    ladder = plot = None
    if request.app.state.store.seasons.get(name).config.is_ladder:
        ladder = api.ladder(request, name)
        plot = history_plot(ladder["history"], [v["bot"] for v in ladder["versions"]])
    return _render(request, "season.html", st=st, prog=prog, bars=bars, names=names,
                   zero=round(-lo / span * 100, 2), heat=heat, three_deck=three_deck,
                   json=json, ladder=ladder, when=when,
                   plot=plot if ladder else history_plot(st["history"], names))


@router.get("/seasons/{name}/versions/{bot}", response_class=HTMLResponse)
def ladder_version(request: Request, name: str, bot: str):
    """One version of a ladder: its rating after each of its pairs."""
    got = api.ladder(request, name)
    row = next((v for v in got["versions"] if v["bot"] == bot), None)
    if row is None:
        from scheduler.errors import Refusal, Refused
        raise Refused(Refusal.NOT_FOUND, f"no version {bot!r} in ladder {name!r}")
    history = [h for h in request.app.state.store.ladder.rating_history(name) if h.bot == bot]
    plot = history_plot([{"units": i + 1, "ratings": {bot: h.mu - 3 * h.sigma}}
                         for i, h in enumerate(history)], [bot])
    return _render(request, "ladder_version.html", season=name, v=row, history=history,
                   plot=plot, when=when, roles=_roles(request, name, bot))


def _roles(request: Request, season: str, bot: str) -> dict | None:
    """A ladder version's deals by role (``scheduler.service.roles``): on the organiser's own
    dashboard; on the service, to its author and the organiser only (None to the others)."""
    from scheduler.service.roles import season_roles, sees_roles
    store = request.app.state.store
    if getattr(request.app.state, "service", None) is not None:
        from web.service import page_viewer
        if not sees_roles(store, page_viewer(request), season, bot):
            return None
    return season_roles(store, season, [bot]).to_dict()


PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22")
PLOT_W, PLOT_H, PAD = 640, 240, 40


def history_plot(history: list[dict], names: list[str]) -> dict | None:
    """The ratings over the season as SVG polylines (one a bot, in the standings' order) with
    their axes: x the rated units counted, y the rating. A bot's line starts at its first
    rating (a ladder's version at its first pair: absent from the points before); a bot with
    none has no line. None with fewer than two points."""
    if len(history) < 2:
        return None
    series = {n: [(h["units"], h["ratings"][n]) for h in history if n in h["ratings"]]
              for n in names}
    series = {n: points for n, points in series.items() if points}
    values = [r for points in series.values() for _, r in points] + [0.0]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    last = history[-1]["units"]

    def x(units: int) -> float:
        return round(PAD + (PLOT_W - 2 * PAD) * units / last, 1)

    def y(rating: float) -> float:
        return round(PLOT_H - PAD - (PLOT_H - 2 * PAD) * (rating - low) / span, 1)

    lines = [{"name": n, "colour": PALETTE[i % len(PALETTE)],
              "points": " ".join(f"{x(units)},{y(r)}" for units, r in points),
              "last": points[-1][1]} for i, (n, points) in enumerate(series.items())]
    return {"width": PLOT_W, "height": PLOT_H, "pad": PAD, "lines": lines, "zero": y(0.0),
            "low": round(low), "high": round(high), "units": last, "y_low": y(low),
            "y_high": y(high), "x_end": x(last)}


@router.get("/matches", response_class=HTMLResponse)
def match_list(request: Request, season: str | None = None, bot: str | None = None,
               version: str | None = Query(None, pattern=f"^$|{api.VERSION}"),
               status: api.Status | None = None, fault: bool | None = None,
               fault_kind: str | None = Query(None, pattern=f"^$|{api.FAULT_KIND}"),
               limit: int = Query(100, ge=1, le=api.MAX_LIMIT), offset: int = Query(0, ge=0, le=10**9)):
    got = api.match_list(request.app.state.store, season=season or None, bot=bot or None,
                         version=version or None, status=status.value if status else None,
                         fault=fault, fault_kind=fault_kind or None, limit=limit,
                         offset=offset, hidden_seasons=api.hidden(request))
    query = {k: v for k, v in {"season": season, "bot": bot, "version": version,
                               "status": status.value if status else None,
                               "fault": None if fault is None else str(fault).lower(),
                               "fault_kind": fault_kind, "limit": limit}.items() if v}
    return _render(request, "matches.html", page=got, query=query,
                   statuses=api.STATUSES, seasons=[r["name"] for r in api.visible_rows(request)])


@router.get("/matches/{match_id}", response_class=HTMLResponse)
def match(request: Request, match_id: str):
    got = api.detail_for(request, match_id)
    own: list[int] = []
    if getattr(request.app.state, "service", None) is not None and not got["sealed"]:
        from scheduler.service.visibility import own_seats
        from web.service import page_viewer
        own = sorted(own_seats(request.app.state.store, page_viewer(request), match_id))
    return _render(request, "match.html", 403 if got["sealed"] else 200, m=got, when=when,
                   own_seats=own)


@router.get("/bots", response_class=HTMLResponse)
def bots(request: Request):
    return _render(request, "bots.html", bots=api.bot_list(request),
                   when=when)
