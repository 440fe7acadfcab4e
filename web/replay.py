"""A match's replay, built from its stored record: the steps as JSON, and the page that walks
them.

The full view is every game's events; "as seat N" is ``MatchFile.seat_view(N)``, the events the
referee showed that seat, so a seat's steps never hold a card it was not shown. Each step keeps
its events and the table after it: the hands known in that view, the trick on the table, the
kitty, the declarations, the trump, the dealer, the levels and the points taken.

The JSON: ``{"match_id", "variant", "seats": [4 names], "view": "full" | "seat N",
"seat": null | N, "steps": [step]}``, a step being ``{"index", "kind": "deal" | "dealing" |
"declaration" | "kitty" | "trick" | "result", "title", "events": [the record's events, without
visible_to], "state": {"game", "deal", "dealer", "levels", "trump", "hands": [4 lists of cards,
or null for a hand this view was not shown], "trick": {"number", "plays": [{"seat", "cards",
"lead"}], "winner", "points"}, "points": [team 0, team 1], "attackers", "kitty": {"cards" (null
while face down to this view), "holder", "state"}, "declarations": [{"seat", "cards", "trump",
"overturn"}], "result": null | the deal's result}}``. Cards are their record text ("7H", "10S",
"LJ" and "BJ" for the jokers).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from referee.match.matchfile import MatchFile
from referee.rules.cards import Card
from scheduler.reports import sealed_reason

router = APIRouter()

_DISPLAY_SUITS = (0, 1, 3, 2)  # spades, hearts, clubs, diamonds: colours alternate


def _sort_key(text: str) -> tuple[int, int]:
    c = Card.parse(text)
    if c.suit is None:
        return (0, -int(c))
    return (1 + _DISPLAY_SUITS.index(c.suit), -c.rank)


def _sorted(cards: list[str]) -> list[str]:
    return sorted(cards, key=_sort_key)


def _remove(hand: list[str] | None, cards: list[str]) -> None:
    if hand is None:
        return
    for c in cards:
        if c in hand:
            hand.remove(c)


class _Table:
    """The table as one view knows it, event by event."""

    def __init__(self) -> None:
        self.game = 0
        self.new_deal(None)

    def new_deal(self, started: dict | None) -> None:
        self.deal = started["deal"] if started else None
        self.dealer = started["dealer"] if started else None
        self.levels = list(started["levels"]) if started else None
        self.hands: list[list[str] | None] = [None] * 4
        self.trick: list[dict] = []
        self.trick_no = 0
        self.trick_winner: int | None = None
        self.trick_points: int | None = None
        self.points = [0, 0]
        self.kitty: dict = {"cards": None, "holder": None, "state": "face down"}
        self.declarations: list[dict] = []
        self.trump: str | None = None
        self.result: dict | None = None

    def apply(self, e: dict) -> None:
        kind = e["event"]
        if kind == "DealStarted":
            self.new_deal(e)
        elif kind == "CardDealt":
            hand = self.hands[e["seat"]]
            if hand is None:
                hand = self.hands[e["seat"]] = []
            hand.append(e["card"])
        elif kind == "Declared":
            self.declarations.append({k: e[k] for k in ("seat", "cards", "trump", "overturn")})
            self.trump = e["trump"]
        elif kind == "DealerSet":
            self.dealer = e["seat"]
        elif kind in ("TrumpSet", "KittyCardDrawn"):
            self.trump = e["trump"]
        elif kind == "KittyOpened":
            self.trump = e["trump"]
            self.kitty = {"cards": list(e["cards"]), "holder": None, "state": "shown"}
        elif kind == "KittyShown":
            self.kitty = {**self.kitty, "cards": list(e["cards"]), "state": "shown"}
        elif kind == "KittyTaken":
            if self.hands[e["seat"]] is not None:
                self.hands[e["seat"]] += e["cards"]
            self.kitty = {"cards": list(e["cards"]), "holder": e["seat"], "state": "taken up"}
        elif kind == "KittyTakenPublic":
            if self.kitty["holder"] is None:
                self.kitty = {**self.kitty, "holder": e["seat"], "state": "taken up"}
        elif kind == "Buried":
            _remove(self.hands[e["seat"]], e["cards"])
            self.kitty = {"cards": list(e["cards"]), "holder": e["seat"], "state": "buried"}
        elif kind == "BuriedPublic":
            if self.kitty["state"] != "buried":
                self.kitty = {"cards": None, "holder": e["seat"], "state": "buried"}
        elif kind == "CardsPassed":
            _remove(self.hands[e["giver"]], e["cards"])
            if self.hands[e["receiver"]] is not None:
                self.hands[e["receiver"]] += e["cards"]
        elif kind == "Played":
            if e["lead"]:
                self.trick, self.trick_winner, self.trick_points = [], None, None
                self.trick_no += 1
            _remove(self.hands[e["seat"]], e["cards"])
            self.trick.append({"seat": e["seat"], "cards": list(e["cards"]),
                               "lead": e["lead"]})
        elif kind == "TrickWon":
            self.trick_winner, self.trick_points = e["seat"], e["points"]
            self.points[e["seat"] % 2] += e["points"]
        elif kind == "DealEnded":
            self.kitty = {**self.kitty, "cards": list(e["kitty"]), "state": "shown"}
            self.result = {k: e[k] for k in ("attacker_points", "kitty_bonus", "penalties",
                                             "attacker_total", "levels", "next_dealer")}
        elif kind == "GameEnded":
            self.game += 1

    def state(self) -> dict[str, Any]:
        return {
            "game": self.game, "deal": self.deal, "dealer": self.dealer, "levels": self.levels,
            "trump": self.trump,
            "hands": [None if h is None else _sorted(h) for h in self.hands],
            "trick": {"number": self.trick_no, "plays": [dict(p) for p in self.trick],
                      "winner": self.trick_winner, "points": self.trick_points},
            "points": list(self.points),
            "attackers": None if self.dealer is None else 1 - self.dealer % 2,
            "kitty": dict(self.kitty),
            "declarations": [dict(d) for d in self.declarations],
            "result": None if self.result is None else dict(self.result),
        }


_GROUP = {
    "DealStarted": "deal", "Redealt": "deal", "RedealDemanded": "deal",
    "CardDealt": "dealing",
    "Declared": "declaration", "Passed": "declaration", "DealerSet": "declaration",
    "TrumpSet": "declaration", "KittyCardDrawn": "declaration",
    "KittyOpened": "kitty", "KittyShown": "kitty", "KittyTaken": "kitty",
    "KittyTakenPublic": "kitty", "Buried": "kitty", "BuriedPublic": "kitty",
    "PreKittyAction": "kitty", "CardsPassed": "kitty", "CardsPassedPublic": "kitty",
    "Played": "trick", "ThrowFailed": "trick", "TrickWon": "trick",
    "DealEnded": "result", "GameEnded": "result", "MatchPoints": "result",
}


def _title(kind: str, events: list[dict], table: _Table) -> str:
    """A line saying what the step did, naming no card (cards are shown as cards)."""
    if kind == "deal":
        started = next((e for e in events if e["event"] == "DealStarted"), None)
        if started is None:
            return "Redeal"
        dealer = "not yet known" if started["dealer"] is None else f"seat {started['dealer']}"
        return (f"Game {table.game + 1}, deal {started['deal'] + 1}: dealer {dealer}, "
                f"levels {started['levels'][0]} / {started['levels'][1]}")
    if kind == "dealing":
        seats = sorted({e["seat"] for e in events})
        return f"Dealing: {len(events)} card(s) to seat(s) {', '.join(map(str, seats))}"
    if kind == "declaration":
        parts = []
        for e in events:
            if e["event"] == "Declared":
                trump = "no trump" if e["trump"] == "none" else f"trump {e['trump']}"
                parts.append(f"seat {e['seat']} {'overturns' if e['overturn'] else 'declares'}"
                             f" ({trump})")
            elif e["event"] == "DealerSet":
                parts.append(f"seat {e['seat']} is the dealer ({e['reason']})")
            elif e["event"] == "Passed":
                parts.append(f"seat {e['seat']} passes")
            elif e["event"] in ("TrumpSet", "KittyCardDrawn"):
                parts.append("trump fixed: " + ("none" if e["trump"] == "none" else e["trump"]))
        return "Declaration: " + "; ".join(parts)
    if kind == "kitty":
        parts = []
        for e in events:
            if e["event"] in ("KittyTaken", "KittyTakenPublic"):
                parts.append(f"seat {e['seat']} takes up the kitty")
            elif e["event"] in ("Buried", "BuriedPublic"):
                parts.append(f"seat {e['seat']} buries the kitty")
            elif e["event"] in ("KittyShown", "KittyOpened"):
                parts.append("the kitty is shown")
            elif e["event"] in ("CardsPassed", "CardsPassedPublic"):
                parts.append(f"seat {e['giver']} passes cards to seat {e['receiver']}")
            elif e["event"] == "PreKittyAction":
                parts.append(f"seat {e['seat']}: {e['action']}")
        return "Kitty: " + "; ".join(dict.fromkeys(parts))
    if kind == "trick":
        plays = [e for e in events if e["event"] == "Played"]
        lead = plays[0]["seat"] if plays else None
        won = next((e for e in events if e["event"] == "TrickWon"), None)
        text = f"Trick {table.trick_no}: seat {lead} leads"
        if any(e["event"] == "ThrowFailed" for e in events):
            text += " (a throw fails)"
        if won is not None:
            text += f", seat {won['seat']} wins {won['points']} point(s)"
        return text
    if kind != "result":
        return ", ".join(dict.fromkeys(e["event"] for e in events))
    r = table.result
    if r is None:
        return "Game over"
    return (f"Deal result: attackers {r['attacker_points']} + kitty {r['kitty_bonus']} = "
            f"{r['attacker_total']} points; levels {r['levels'][0]} / {r['levels'][1]}")


def build_steps(events: list[dict]) -> list[dict[str, Any]]:
    """The viewer's steps over ``events`` (one view's, in order): the deal's start, dealing
    (cut by each declaration), each declaration, the kitty, each trick, the deal's result;
    each with its events and the table after them."""
    table = _Table()
    steps: list[dict[str, Any]] = []
    current: list[dict] = []
    group = None

    def close() -> None:
        nonlocal current
        if current:
            steps.append({"index": len(steps), "kind": group,
                          "title": _title(group, current, table), "events": current,
                          "state": table.state()})
        current = []

    for e in events:
        kind = _GROUP.get(e["event"], "other")
        starts = (kind != group or e["event"] == "DealStarted"
                  or (e["event"] == "Declared" and kind == group)
                  or (e["event"] == "Played" and e["lead"]))
        if starts:
            close()
            group = kind
        table.apply(e)
        current.append(e)
        if e["event"] == "TrickWon":
            close()
            group = None
    close()
    return steps


def _match(request: Request, match_id: str) -> MatchFile:
    store = request.app.state.store
    sealed = store.sealed_by(match_id)
    if sealed:
        raise HTTPException(403, f"match {match_id}: {sealed_reason(sealed)}")
    data = store.record(match_id)
    if data is None:
        raise HTTPException(404, f"no match record with id {match_id}")
    try:
        return MatchFile.from_dict(data, match_id)
    except ValueError as e:
        raise HTTPException(500, f"match {match_id}: the stored record cannot be read: "
                                 f"{e}") from None


def _seat(seat: str | None) -> int | None:
    if seat is None or seat == "":
        return None
    if seat not in ("0", "1", "2", "3"):
        raise HTTPException(400, f"bad parameter seat: {seat!r}: expected a seat 0-3")
    return int(seat)


def replay_of(match: MatchFile, seat: int | None) -> dict[str, Any]:
    """The replay JSON of ``match`` in the full view (``seat`` None) or as ``seat`` saw it."""
    if seat is None:
        events = [{k: v for k, v in e.items() if k != "visible_to"}
                  for game in match.games for e in game.events]
    else:
        events = match.seat_view(seat)
    return {"match_id": match.match_id, "variant": match.variant, "seats": list(match.seats),
            "view": "full" if seat is None else f"seat {seat}", "seat": seat,
            "steps": build_steps(events)}


_ERRORS = {400: {"description": "a bad seat (not 0-3)"},
           403: {"description": "sealed until the other matches on its cards are over"},
           404: {"description": "no such match record"}}


@router.get("/api/matches/{match_id}/replay", responses=_ERRORS)
def replay_api(request: Request, match_id: str, seat: str | None = None) -> dict[str, Any]:
    """The match's replay steps, in the full view or as ``seat`` (0-3) saw it."""
    view = _seat(seat)
    return replay_of(_match(request, match_id), view)


@router.get("/matches/{match_id}/replay", response_class=HTMLResponse, include_in_schema=False)
def replay_page(request: Request, match_id: str, seat: str | None = None):
    """The replay viewer; it loads its steps from the API in the view asked for."""
    view = _seat(seat)
    match = _match(request, match_id)
    return request.app.state.templates.TemplateResponse(
        request, "replay.html",
        {"match_id": match_id, "seat": view, "seats": list(match.seats),
         "variant": match.variant})
