"""The dashboard's server-rendered pages."""

from __future__ import annotations

import json
import time

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from scheduler.reports import season_rows
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
    return _render(request, "index.html", seasons=season_rows(request.app.state.store),
                   when=when)


@router.get("/seasons/{name}", response_class=HTMLResponse)
def season(request: Request, name: str):
    st = api.standings(request, name)
    prog = api.progress(request.app.state.store, name)
    lo = min([b["low"] for b in st["bots"]] + [0.0])
    hi = max([b["high"] for b in st["bots"]] + [0.0])
    span = (hi - lo) or 1.0
    bars = {b["name"]: {"left": round((b["low"] - lo) / span * 100, 2),
                        "width": round(max((b["high"] - b["low"]) / span * 100, 0.5), 2),
                        "mark": round((b["rating"] - lo) / span * 100, 2)} for b in st["bots"]}
    names = [b["name"] for b in st["bots"]]
    three_deck = any(b["match_points"] is not None for b in st["bots"])
    return _render(request, "season.html", st=st, prog=prog, bars=bars, names=names,
                   zero=round(-lo / span * 100, 2), heat=heat, three_deck=three_deck,
                   json=json)


@router.get("/matches", response_class=HTMLResponse)
def match_list(request: Request, season: str | None = None, bot: str | None = None,
               status: api.Status | None = None, fault: bool | None = None,
               limit: int = Query(100, ge=1, le=api.MAX_LIMIT), offset: int = Query(0, ge=0)):
    got = api.match_list(request.app.state.store, season=season or None, bot=bot or None,
                         status=status.value if status else None, fault=fault, limit=limit,
                         offset=offset)
    query = {k: v for k, v in {"season": season, "bot": bot,
                               "status": status.value if status else None,
                               "fault": None if fault is None else str(fault).lower(),
                               "limit": limit}.items() if v}
    return _render(request, "matches.html", page=got, query=query,
                   statuses=api.STATUSES, seasons=request.app.state.store.season_names())


@router.get("/matches/{match_id}", response_class=HTMLResponse)
def match(request: Request, match_id: str):
    got = api.match_detail(request.app.state.store, match_id)
    return _render(request, "match.html", 403 if got["sealed"] else 200, m=got, when=when)


@router.get("/bots", response_class=HTMLResponse)
def bots(request: Request):
    return _render(request, "bots.html", bots=api.bot_list(request.app.state.store),
                   when=when)
