"""People play the bots in the browser (``/play``): the form, the table, the game's event stream
and the person's answers, its record, replay and the bots' seat logs. The rules are the
domain's (``scheduler.service.human``); the page is ``static/play.js``.

Server-Sent Events carry the referee's lines to the page and a POST each answer back (not a
WebSocket: docs/web.md, *Playing the bots*, says why). A stream polls the game's messages kept
in memory (a list and its length, no work on the event loop) and ends once the game is over.
"""

from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.responses import PlainTextResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from scheduler.errors import Refusal, Refused
from scheduler.service import human
from scheduler.service.visibility import Viewer
from scheduler.states import HumanGameState
from web import service
from web.author_pages import read_form, render_page, session_author, session_reader
from web.refusals import headers_of, status_of

router = APIRouter(include_in_schema=False)
#: a stream's poll of its game's messages, and its keep-alive comment's period
POLL_S, KEEP_ALIVE_S = 0.1, 15.0
GAME = Path(ge=1, le=2**31)


def _games(request: Request) -> human.Games:
    return request.app.state.games


def _game(request: Request, viewer: Viewer, game_id: int):
    """Game ``game_id``: the viewer's own (or any, for the organiser)."""
    row = request.app.state.store.humans.get(game_id)
    if row is None or (row.person != viewer.name and not viewer.organiser):
        raise Refused(Refusal.NOT_FOUND, f"no game {game_id} of yours")
    return row


def _view(row) -> dict:
    over = row.state == HumanGameState.OVER
    return {"id": row.id, "seat": row.seat, "variant": row.variant, "seats": list(row.seats),
            "state": row.state, "reason": row.reason, "match_id": row.match_id,
            "record_url": f"/play/{row.id}/record" if over else None,
            "replay_url": f"/play/{row.id}/replay" if over else None}


def _form_page(request: Request, who: Viewer, code: int = 200, headers=None, **context):
    store = request.app.state.store
    from referee.rules.variants import variant_ids
    config = request.app.state.human
    return render_page(request, "play.html", code, headers, variants=list(variant_ids()),
                   bots=human.choices(store, who), enabled=config.on, games=[
                       _view(g) | {"created_at": g.created_at}
                       for g in store.humans.of(None if who.organiser else who.name)],
                   decision_ms=config.decision_ms, max_deals=human.MAX_DEALS,
                   **{"error": None, "form": dict(request.query_params), **context})


@router.get("/play", response_class=HTMLResponse)
def play_page(request: Request):
    """The form: a variant, the person's seat, the three bots (``?bot_2=REF``: a partner
    chosen, as a version's page links it)."""
    return _form_page(request, session_reader(request))


@router.post("/play")
async def play_start(request: Request):
    who = await run_in_threadpool(session_author, request)
    form = await read_form(request, 8 << 10)
    service.check_csrf(who, form.get("csrf"))
    kept = {k: str(form.get(k, ""))[:200] for k in ("variant", "seat", "bot_1", "bot_2",
                                                    "bot_3", "deals")}

    def start() -> int:
        plan = human.ask(request.app.state.store, request.app.state.human, who,
                         kept["variant"], kept["seat"],
                         [kept["bot_1"], kept["bot_2"], kept["bot_3"]], kept["deals"] or 1)
        return _games(request).start(who, plan)
    try:
        gid = await run_in_threadpool(start)
    except Refused as e:
        return await run_in_threadpool(_form_page, request, who, status_of(e), headers_of(e),
                                       error=e.detail, form=kept)
    return RedirectResponse(f"/play/{gid}", status_code=303)


@router.get("/play/{game_id}", response_class=HTMLResponse)
def table_page(request: Request, game_id: int = GAME):
    who = session_reader(request)
    row = _game(request, who, game_id)
    return render_page(request, "play_table.html", game=_view(row) | {
        "decision_ms": request.app.state.human.decision_ms})


@router.get("/play/{game_id}/stream")
async def stream(request: Request, game_id: int = GAME,
                 after: int = Query(0, ge=0, le=10**6)):
    """The game's messages as Server-Sent Events, from after ``after`` (or the
    ``Last-Event-ID`` a reconnecting page sends) until the game is over."""
    who = await run_in_threadpool(session_author, request)
    row = await run_in_threadpool(_game, request, who, game_id)
    last = request.headers.get("last-event-id", "")
    start = int(last) if last.isdigit() and len(last) < 8 else after
    games = _games(request)
    games.watching(game_id)

    async def events():
        try:
            async for text in _events(request, games, row, start):
                yield text
        finally:
            games.unwatched(game_id)
    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def _events(request: Request, games: human.Games, row, start: int):
    """The game's stream (see ``stream``): a poll of its messages kept here, or, for a game
    over and no longer kept, its final state from the store."""
    game_id = row.id
    sent, quiet = start, 0.0
    yield "retry: 2000\n\n"
    while True:
        got, over = games.messages(game_id, sent)
        if not got and over and sent == start and not games.kept(game_id):
            got = [{"seq": sent + 1, "type": "game", "state": row.state, "reason": row.reason}]
        for m in got:
            if m["type"] == "game" and m["state"] == HumanGameState.OVER:
                m = m | {"record_url": f"/play/{game_id}/record",
                         "replay_url": f"/play/{game_id}/replay"}
            yield f"id: {m['seq']}\ndata: {json.dumps(m, ensure_ascii=False)}\n\n"
            sent = m["seq"]
            quiet = 0.0
        if over and not got:
            return
        if await request.is_disconnected():
            return
        await asyncio.sleep(POLL_S)
        quiet += POLL_S
        if quiet >= KEEP_ALIVE_S:
            quiet = 0.0
            yield ": still here\n\n"


@router.post("/play/{game_id}/answer")
async def answer(request: Request, game_id: int = GAME):
    """The person's answer to the open request: handed to the referee as the seat's line."""
    who = await run_in_threadpool(session_author, request)
    try:
        service.check_csrf(who, request.headers.get("x-csrf-token"))
        body = await service.read_body(request, human.ANSWER_BYTES)
        await run_in_threadpool(_games(request).answer, game_id, who, body)
    except Refused as e:
        return JSONResponse({"detail": e.detail}, status_code=status_of(e),
                            headers=headers_of(e))
    return JSONResponse({"ok": True}, status_code=202)


def _stored(request: Request, game_id: int):
    who = session_reader(request)
    row = _game(request, who, game_id)
    record = request.app.state.store.humans.record(game_id)  # (a MatchFile)
    if record is None:
        raise Refused(Refusal.NOT_FOUND, f"game {game_id} has no record yet: it is "
                      f"{row.state}")
    return who, row, record


@router.get("/play/{game_id}/record")
def record(request: Request, game_id: int = GAME):
    """The game's record (``arena replay FILE --verify``), the bots' logs left out."""
    from web.results import redacted
    _, row, match = _stored(request, game_id)
    return Response(json.dumps(redacted(match.to_dict(), {row.seat}), ensure_ascii=False),
                    media_type="application/json", headers={
                        "Content-Disposition": f'attachment; filename="{row.match_id}.json"'})


@router.get("/api/play/{game_id}/replay")
def replay_steps(request: Request, game_id: int = GAME, seat: str | None = None):
    """The game's replay steps, in the full view or as ``seat`` (0-3) saw it."""
    from web.replay import replay_of, seat_of
    _, _, match = _stored(request, game_id)
    return replay_of(match, seat_of(seat))


@router.get("/play/{game_id}/replay", response_class=HTMLResponse)
def replay(request: Request, game_id: int = GAME, seat: str | None = None):
    from web.replay import seat_of
    _, row, _ = _stored(request, game_id)
    return request.app.state.templates.TemplateResponse(
        request, "replay.html", {"match_id": row.match_id, "seat": seat_of(seat),
                                 "seats": list(row.seats), "variant": row.variant,
                                 "steps_url": f"/api/play/{game_id}/replay"})


@router.get("/play/{game_id}/logs/{seat}", response_class=PlainTextResponse)
def seat_log(request: Request, game_id: int = GAME, seat: int = Path(ge=0, le=3)):
    """A bot's seat log in a game, for that bot's author (and the organiser)."""
    who = session_reader(request)
    store = request.app.state.store
    row = store.humans.get(game_id)
    ref = row.seats[seat] if row is not None else ""
    v = store.registry.version(*ref.split("@", 1)) if "@" in ref else None
    if row is None or v is None or (v.author != who.name and not who.organiser):
        raise Refused(Refusal.NOT_FOUND, f"no log of a bot of yours at seat {seat} of game "
                      f"{game_id}")
    return store.humans.log(game_id, seat)
