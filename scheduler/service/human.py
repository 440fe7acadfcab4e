"""People play the bots: a person's seat in a match, played in the browser through the real
referee (docs/web.md, *Playing the bots*).

To the referee the person's seat is a stdio seat like a program's (``referee.match.local``'s
``piped``): the same protocol, rules, hidden information and clock (``ARENA_HUMAN_DECISION_MS``
a decision, generous). The match runs in a process of its own (``play_game``: the three bots
built and started in their sandboxes as in any match); a relay there hands each line the
referee writes to the seat to the service, and each answer the person sends to the referee,
which judges it as any stdio answer. On the service, ``Games`` keeps each game's lines for its
page (an event stream) and takes the person's answers. A game is stored with its record once
over (``store.humans``): replayable, and no season's, so it counts in no standings. One game at
a time per person, at most ``ARENA_HUMAN_GAMES`` at once; ``ARENA_HUMAN=0`` turns them off.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

from house import settings as house
from scheduler.errors import Refusal, Refused
from scheduler.service.visibility import Viewer
from scheduler.states import HumanGameState, VersionState

#: the deals of a person's game unless they ask for more, and the most they may ask
DEALS, MAX_DEALS = 1, 4
#: the end of a bot's seat log kept with a game for its author
LOG_KEPT = 64 * 1024
#: an answer's longest line
ANSWER_BYTES = 16 * 1024
#: game messages kept for its page (a game of a few deals has some hundreds)
MESSAGES_KEPT = 20_000
#: games over whose messages are still kept here (a page that reloads after the end gets them)
OVER_KEPT = 32
#: a game's event streams open at once (a page and a reload or two)
STREAMS = 4
HUMAN_PREFIX = "human:"


@dataclass(frozen=True, slots=True)
class HumanSettings:
    """People's games on this service: on or off, how many at once, a decision's time."""
    on: bool = True
    games: int = 4
    decision_ms: int = 120_000

    @classmethod
    def from_env(cls) -> "HumanSettings":
        got = cls(house.HUMAN.value(), house.HUMAN_GAMES.value(),
                  house.HUMAN_DECISION_MS.value())
        if got.games < 1 or got.decision_ms < 1000:
            raise ValueError(f"{house.HUMAN_GAMES.name} must be 1 or more and "
                             f"{house.HUMAN_DECISION_MS.name} 1000 or more")
        return got


def choices(store, viewer: Viewer) -> list[dict]:
    """The bots ``viewer`` may sit with: the house bots, their own ready versions, and for
    the organiser every ready version; each ``{"ref", "label", "kind"}``."""
    from scheduler.service.house import house_bots, ready_of
    house_refs = [r.ref for r in house_bots(store)]
    out = [{"ref": ref, "label": f"{ref} (house bot)", "kind": "house"} for ref in house_refs]
    rows = [r for r in store.registry.versions() if r.ref not in house_refs
            and (viewer.organiser or r.author == viewer.name)]
    for r in ready_of(store, rows):
        mine = r.author == viewer.name
        out.append({"ref": r.ref, "label": r.ref if mine else f"{r.ref} ({r.author})",
                    "kind": "mine" if mine else "any"})
    return out


def ask(store, config: HumanSettings, viewer: Viewer, variant: str, seat: object,
        bots: list[object], deals: object = DEALS) -> dict:
    """Check a person's game as asked for (the variant, their seat, the three bots after it
    in play order, the deals): its plan, ``{"variant", "seat", "seats", "refs", "deals"}``;
    refused with the field that is wrong, or past the limits."""
    from referee.rules.variants import variant_ids
    if not config.on:
        raise Refused(Refusal.FORBIDDEN, "games against the bots are turned off on this "
                      "service")
    if variant not in variant_ids():
        raise Refused(Refusal.MALFORMED, f"variant: expected one of {', '.join(variant_ids())}")
    if seat not in ("0", "1", "2", "3", 0, 1, 2, 3):
        raise Refused(Refusal.MALFORMED, "seat: expected a seat 0-3")
    if str(deals) not in tuple(str(n) for n in range(1, MAX_DEALS + 1)):
        raise Refused(Refusal.MALFORMED, f"deals: expected 1 to {MAX_DEALS}")
    allowed = {c["ref"] for c in choices(store, viewer)}
    if len(bots) != 3:
        raise Refused(Refusal.MALFORMED, "bots: expected three, one for each other seat")
    for i, ref in enumerate(bots, 1):
        if not isinstance(ref, str) or ref not in allowed:
            raise Refused(Refusal.MALFORMED, f"bot_{i}: expected a house bot or a ready "
                          "version of yours")
    if store.humans.open_count(viewer.name):
        raise Refused(Refusal.LIMITED, "you are playing a game already: finish it first (one "
                      "game at a time)", 30.0)
    if store.humans.open_count() >= config.games:
        raise Refused(Refusal.LIMITED, f"{config.games} games against the bots are being "
                      "played on this service; try again in a few minutes", 60.0)
    me = int(str(seat))
    seats = [""] * 4
    seats[me] = f"{HUMAN_PREFIX}{viewer.name}"
    for i, ref in enumerate(bots, 1):
        seats[(me + i) % 4] = str(ref)
    return {"variant": variant, "seat": me, "seats": seats,
            "refs": [None if i == me else seats[i] for i in range(4)], "deals": int(str(deals))}


# -- the game's own process --------------------------------------------------------------------
def play_game(store_url: str, game_id: int, plan: dict, decision_ms: int, out_conn,
              in_conn, parent: int) -> None:
    """Play game ``game_id`` (``ask``'s plan) in this process, which ends with the service's
    (``parent``): build and start its bots, relay the person's seat (each line the referee
    writes to it to ``out_conn``; each answer from ``in_conn`` to the referee) and store the
    record once over."""
    import tempfile

    from scheduler.dispatch import die_with_parent
    from scheduler.store import open_store
    die_with_parent(parent)
    store = open_store(store_url)
    outbox = _Outbox(out_conn)
    try:
        with tempfile.TemporaryDirectory(prefix="arena-human-") as tmp:
            record, logs = _play(store, game_id, plan, decision_ms, outbox, in_conn, Path(tmp))
        store.humans.change(game_id, HumanGameState.OVER, record=record, logs=logs)
        outbox.state(HumanGameState.OVER)
    except Exception as e:  # the game cannot go on: said on its page and stored
        why = f"{type(e).__name__}: {e}"[:2000]
        store.humans.change(game_id, HumanGameState.FAILED, why)
        outbox.state(HumanGameState.FAILED, why)


class _Outbox:
    """The game process's one way to the service: its lines and its state, one at a time."""

    def __init__(self, conn) -> None:
        self.conn, self.lock = conn, threading.Lock()

    def put(self, kind: bytes, data: bytes) -> None:
        with self.lock:
            try:
                self.conn.send_bytes(kind + data)
            except OSError:  # the service is gone: the game plays on to its record
                pass

    def state(self, state: str, reason: str | None = None) -> None:
        self.put(b"S", json.dumps({"state": state, "reason": reason}).encode())


def _play(store, game_id: int, plan: dict, decision_ms: int, outbox: _Outbox, in_conn,
          workdir: Path) -> tuple[dict, dict[int, str]]:
    from contextlib import ExitStack

    from referee.match.local import run_match
    from referee.match.spec import SeatBot, TimeControl
    from scheduler.registry.cache import using
    from scheduler.registry.versions import materialise, pin_portable
    from scheduler.season import match_spec
    seat = plan["seat"]
    with ExitStack() as held:
        bots: list = [None] * 4
        built: dict[str, object] = {}
        for i, ref in enumerate(plan["refs"]):
            if ref is None:
                continue
            if ref not in built:
                v = store.registry.version(*ref.split("@", 1))
                if v is None:
                    raise ValueError(f"{ref}: no such version")
                held.enter_context(using(v.content_hash))
                built[ref] = materialise(store, SeatBot(v.ref, pin_portable(v, v.ref),
                                                        version_hash=v.content_hash)).manifest
            bots[i] = built[ref]
        row = store.humans.get(game_id)
        spec = match_spec(row.match_id, plan["seats"], variant=plan["variant"],
                          seed=house.HUMAN_SEED.value() or secrets.token_hex(16),
                          max_deals=plan["deals"],
                          time_control=TimeControl(per_decision_ms=decision_ms,
                                                   bank_ms=4 * decision_ms))
        to_seat_r, to_seat_w = os.pipe()      # the referee writes the seat's input here
        from_seat_r, from_seat_w = os.pipe()  # and reads its answers here
        threading.Thread(target=_lines_out, args=(to_seat_r, outbox), daemon=True).start()
        threading.Thread(target=_answers_in, args=(in_conn, from_seat_w), daemon=True).start()
        store.humans.change(game_id, HumanGameState.PLAYING)
        outbox.state(HumanGameState.PLAYING)
        unsandboxed = house.UNSANDBOXED.value()
        _, record, _ = run_match(spec, bots, workdir, sandbox="none" if unsandboxed else None,
                                 piped={seat: (open(to_seat_w, "wb", buffering=0),
                                               open(from_seat_r, "rb", buffering=0))})
    logs = {}
    for i in range(4):
        path = workdir / f"seat{i}.log"
        if i != seat and path.exists():
            logs[i] = path.read_bytes()[-LOG_KEPT:].decode("utf-8", "replace")
    return record, logs


def _lines_out(fd: int, outbox: _Outbox) -> None:
    """Each line the referee writes to the seat, to the service, until the seat is closed."""
    with open(fd, "rb") as lines:
        for line in lines:
            outbox.put(b"L", line.rstrip(b"\n"))


def _answers_in(in_conn, fd: int) -> None:
    """Each answer the service hands on, to the referee as the seat's output line."""
    with open(fd, "wb", buffering=0) as out:
        while True:
            try:
                line = in_conn.recv_bytes()
            except (EOFError, OSError):
                return
            try:
                out.write(line.rstrip(b"\n") + b"\n")
            except OSError:  # the match is over
                return


# -- on the service ----------------------------------------------------------------------------
@dataclass
class _Live:
    """A game being played here: its process, its messages for the page, the open request."""
    id: int
    person: str
    process: object
    answers: object
    messages: list = field(default_factory=list)
    open_request: str | None = None
    over: bool = False
    streams: int = 0


class Games:
    """The games being played on this service: each one's process started (``start``), its
    messages kept for its page (``messages``: after a sequence number) and the person's
    answers handed to it (``answer``). ``close`` ends them."""

    def __init__(self, store, store_url: str, config: HumanSettings) -> None:
        """Games played by this service (``arena serve`` first marks those a previous run
        left open failed: ``store.humans.abandon_open``)."""
        import multiprocessing
        self.store, self.store_url, self.config = store, store_url, config
        self.ctx = multiprocessing.get_context("spawn")
        self.lock = threading.Lock()
        self.live: dict[int, _Live] = {}

    def start(self, viewer: Viewer, plan: dict) -> int:
        """Store the game and start its process; its id."""
        gid = self.store.humans.add(viewer.name, plan["variant"], plan["seat"], plan["seats"],
                                    f"human-{secrets.token_hex(6)}")
        out_recv, out_send = self.ctx.Pipe(duplex=False)
        in_recv, in_send = self.ctx.Pipe(duplex=False)
        process = self.ctx.Process(target=play_game, name=f"arena-human-{gid}", daemon=True,
                                   args=(self.store_url, gid, plan, self.config.decision_ms,
                                         out_send, in_recv, os.getpid()))
        process.start()
        out_send.close()
        in_recv.close()
        live = _Live(gid, viewer.name, process, in_send)
        with self.lock:
            live.messages.append({"seq": 1, "type": "game", "state": HumanGameState.STARTING,
                                  "reason": None})
            self.live[gid] = live
        threading.Thread(target=self._read, args=(live, out_recv), daemon=True,
                         name=f"arena-human-{gid}-lines").start()
        return gid

    def _add(self, live: _Live, message: dict) -> None:
        with self.lock:
            if len(live.messages) < MESSAGES_KEPT:
                live.messages.append({"seq": len(live.messages) + 1, **message})

    def _read(self, live: _Live, conn) -> None:
        """The game process's lines and states, into the game's messages, until it ends."""
        while True:
            try:
                data = conn.recv_bytes()
            except (EOFError, OSError):
                break
            kind, body = data[:1], data[1:]
            if kind == b"L":
                try:
                    line = json.loads(body)
                except ValueError:
                    continue
                if isinstance(line, dict) and line.get("type") == "request":
                    live.open_request = str(line.get("request_id"))
                elif isinstance(line, dict) and line.get("type") in ("rejection", "match_end"):
                    live.open_request = None
                self._add(live, {"type": "line", "line": line})
            elif kind == b"S":
                state = json.loads(body)
                self._add(live, {"type": "game", **state})
                if state["state"] in (HumanGameState.OVER, HumanGameState.FAILED):
                    live.over = True
        if not live.over:  # the process died without a word
            why = "the game's process ended before the game"
            self.store.humans.change(live.id, HumanGameState.FAILED, why)
            self._add(live, {"type": "game", "state": HumanGameState.FAILED, "reason": why})
            live.over = True
        with self.lock:  # the oldest games over beyond ``OVER_KEPT`` are read from the store
            over = [g for g in self.live.values() if g.over]
            for g in over[:max(0, len(over) - OVER_KEPT)]:
                del self.live[g.id]

    def messages(self, game_id: int, after: int) -> tuple[list[dict], bool]:
        """The game's messages after sequence number ``after``, and whether it is over (no
        message and over when it is not kept here: over long ago, or before the service
        started; its state is the store's)."""
        with self.lock:
            live = self.live.get(game_id)
            if live is None:
                return [], True
            return live.messages[max(0, after):], live.over

    def kept(self, game_id: int) -> bool:
        """Whether the game's messages are kept here."""
        with self.lock:
            return game_id in self.live

    def watching(self, game_id: int) -> None:
        """One more event stream of the game (``STREAMS`` at most); ``unwatched`` ends it."""
        with self.lock:
            live = self.live.get(game_id)
            if live is None:
                return
            if live.streams >= STREAMS:
                raise Refused(Refusal.LIMITED, f"{STREAMS} streams of game {game_id} are open "
                              "already: close a page of it", 5.0)
            live.streams += 1

    def unwatched(self, game_id: int) -> None:
        with self.lock:
            live = self.live.get(game_id)
            if live is not None and live.streams > 0:
                live.streams -= 1

    def answer(self, game_id: int, viewer: Viewer, body: bytes) -> None:
        """Hand ``viewer``'s answer to the open request of their game to its referee."""
        live = self.live.get(game_id)
        if live is None or live.person != viewer.name:
            raise Refused(Refusal.NOT_FOUND, f"no game {game_id} of yours is being played")
        if len(body) > ANSWER_BYTES:
            raise Refused(Refusal.TOO_LARGE, f"an answer is at most {ANSWER_BYTES} bytes")
        try:
            data = json.loads(body)
        except ValueError:
            raise Refused(Refusal.MALFORMED, "an answer is a JSON object: {\"request_id\": "
                          "..., \"action\": {...}}") from None
        if not isinstance(data, dict) or set(data) != {"request_id", "action"}:
            raise Refused(Refusal.MALFORMED, "an answer is a JSON object with request_id and "
                          "action, and nothing else")
        with self.lock:
            if live.open_request is None or str(data["request_id"]) != live.open_request:
                raise Refused(Refusal.CONFLICT, "no such request is open: it was answered, "
                              "or its time ran out")
            live.open_request = None
        try:
            live.answers.send_bytes(json.dumps(data).encode())  # type: ignore[attr-defined]
        except OSError:
            raise Refused(Refusal.CONFLICT, "the game is over") from None

    def close(self) -> None:
        """End every game's process (the service stops): they are stored as failed."""
        for live in list(self.live.values()):
            process = live.process
            if process.is_alive():  # type: ignore[attr-defined]
                process.terminate()  # type: ignore[attr-defined]
                process.join(10)  # type: ignore[attr-defined]
