"""A match's replay, built from its stored record: the steps as JSON, and the page that walks
them.

The full view is every game's events; "as seat N" is ``MatchFile.events(N)``, the events the
referee showed that seat, so a seat's steps never hold a card it was not shown. Each step keeps
its events and the table after it: the hands known in that view (sorted as a player holds
them: once the engine has fixed the trump, trumps first in its order), the trick on the table,
the kitty, the declarations, the trump, the dealer, the levels and the points taken.

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

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from referee.match.matchfile import MatchFile
from referee.rules.cards import RANK_TEXT, SUITS, TEXT, Card
from referee.rules.events import (Buried, BuriedPublic, CardDealt, CardsPassed,
                                  CardsPassedPublic, DealEnded, DealerSet, DealStarted, Declared,
                                  Event, GameEnded, KittyCardDrawn, KittyOpened, KittyShown,
                                  KittyTaken, KittyTakenPublic, MatchPoints, Passed, Played,
                                  PreKittyAction, RedealDemanded, Redealt, ThrowFailed, TrickWon,
                                  TrumpSet)
from referee.rules.record import replayed
from referee.rules.trump import TRUMP, TrumpContext
from scheduler.errors import Refusal, Refused
from scheduler.reports import sealed_reason

router = APIRouter()

_DISPLAY_SUITS = (0, 1, 3, 2)  # spades, hearts, clubs, diamonds: colours alternate


def _sort_key(card: int, order: TrumpContext | None) -> tuple[int, int, int]:
    """Where a card sits in a hand as a player holds it. Once the trump is fixed (``order``,
    the engine's trump context): the trumps first, strongest first in the engine's order
    (jokers, level cards, the trump suit), then each side suit, high to low. Before: jokers,
    then each suit, high to low."""
    c = Card(card)
    place = -1 if c.suit is None else _DISPLAY_SUITS.index(c.suit)
    if order is not None and order.cls[card] == TRUMP:
        return (0, -order.pos[card], place)
    rank = c.rank
    if rank is None:  # a joker
        return (0, -card, place)
    return (1 + place, -rank, 0)


def trump_orders(match: MatchFile) -> list[TrumpContext | None]:
    """The engine's trump context after each event of ``match`` (in ``match.events()``'s
    order), its games' actions applied again: None while the trump is not fixed, and from an
    action the engine refuses on (a record that does not verify)."""
    out: list[TrumpContext | None] = []
    for game in match.games:
        got: list[TrumpContext | None] = []
        try:
            for state, events in replayed(game):
                got += [state.ctx] * len(events)
        except ValueError:
            pass
        out += (got + [None] * len(game.events))[:len(game.events)]
    return out


def _texts(cards) -> list[str]:
    return [TEXT[c] for c in cards]


def _trump(trump: int | None) -> str:
    """A trump as the record writes it: its suit's letter, or "none"."""
    return "none" if trump is None else SUITS[trump]


def _remove(hand: list[int] | None, cards) -> None:
    if hand is None:
        return
    for c in cards:
        if c in hand:
            hand.remove(c)


class _Table:
    """The table as one view knows it, event by event."""

    def __init__(self) -> None:
        self.game = 0
        self.order: TrumpContext | None = None  # the engine's trump context, once fixed
        self.new_deal(None)

    def new_deal(self, started: DealStarted | None) -> None:
        self.deal = started.deal if started else None
        self.dealer = started.dealer if started else None
        self.levels = [RANK_TEXT[x] for x in started.levels] if started else None
        self.hands: list[list[int] | None] = [None] * 4
        self.trick: list[dict] = []
        self.trick_no = 0
        self.trick_winner: int | None = None
        self.trick_points: int | None = None
        self.points = [0, 0]
        self.kitty: dict = {"cards": None, "holder": None, "state": "face down"}
        self.declarations: list[dict] = []
        self.trump: str | None = None
        self.result: dict | None = None

    def apply(self, e: Event) -> None:
        if isinstance(e, DealStarted):
            self.new_deal(e)
        elif isinstance(e, CardDealt):
            hand = self.hands[e.seat]
            if hand is None:
                hand = self.hands[e.seat] = []
            hand.append(e.card)
        elif isinstance(e, Declared):
            self.trump = _trump(e.trump)
            self.declarations.append({"seat": e.seat, "cards": _texts(e.cards),
                                      "trump": self.trump, "overturn": e.overturn})
        elif isinstance(e, DealerSet):
            self.dealer = e.seat
        elif isinstance(e, (TrumpSet, KittyCardDrawn)):
            self.trump = _trump(e.trump)
        elif isinstance(e, KittyOpened):
            self.trump = _trump(e.trump)
            self.kitty = {"cards": _texts(e.cards), "holder": None, "state": "shown"}
        elif isinstance(e, KittyShown):
            self.kitty = {**self.kitty, "cards": _texts(e.cards), "state": "shown"}
        elif isinstance(e, KittyTaken):
            taker = self.hands[e.seat]
            if taker is not None:
                taker += e.cards
            self.kitty = {"cards": _texts(e.cards), "holder": e.seat, "state": "taken up"}
        elif isinstance(e, KittyTakenPublic):
            if self.kitty["holder"] is None:
                self.kitty = {**self.kitty, "holder": e.seat, "state": "taken up"}
        elif isinstance(e, Buried):
            _remove(self.hands[e.seat], e.cards)
            self.kitty = {"cards": _texts(e.cards), "holder": e.seat, "state": "buried"}
        elif isinstance(e, BuriedPublic):
            if self.kitty["state"] != "buried":
                self.kitty = {"cards": None, "holder": e.seat, "state": "buried"}
        elif isinstance(e, CardsPassed):
            _remove(self.hands[e.giver], e.cards)
            receiver = self.hands[e.receiver]
            if receiver is not None:
                receiver += e.cards
        elif isinstance(e, Played):
            if e.lead:
                self.trick, self.trick_winner, self.trick_points = [], None, None
                self.trick_no += 1
            _remove(self.hands[e.seat], e.cards)
            self.trick.append({"seat": e.seat, "cards": _texts(e.cards), "lead": e.lead})
        elif isinstance(e, TrickWon):
            self.trick_winner, self.trick_points = e.seat, e.points
            self.points[e.seat % 2] += e.points
        elif isinstance(e, DealEnded):
            self.kitty = {**self.kitty, "cards": _texts(e.kitty), "state": "shown"}
            self.result = {"attacker_points": e.attacker_points, "kitty_bonus": e.kitty_bonus,
                           "penalties": list(e.penalties), "attacker_total": e.attacker_total,
                           "levels": [RANK_TEXT[x] for x in e.levels],
                           "next_dealer": e.next_dealer}
        elif isinstance(e, GameEnded):
            self.game += 1

    def state(self) -> dict[str, Any]:
        return {
            "game": self.game, "deal": self.deal, "dealer": self.dealer, "levels": self.levels,
            "trump": self.trump,
            "hands": [None if h is None else _texts(sorted(
                h, key=lambda card: _sort_key(card, self.order))) for h in self.hands],
            "trick": {"number": self.trick_no, "plays": [dict(p) for p in self.trick],
                      "winner": self.trick_winner, "points": self.trick_points},
            "points": list(self.points),
            "attackers": None if self.dealer is None else 1 - self.dealer % 2,
            "kitty": dict(self.kitty),
            "declarations": [dict(d) for d in self.declarations],
            "result": None if self.result is None else dict(self.result),
        }


_GROUP = {
    DealStarted: "deal", Redealt: "deal", RedealDemanded: "deal",
    CardDealt: "dealing",
    Declared: "declaration", Passed: "declaration", DealerSet: "declaration",
    TrumpSet: "declaration", KittyCardDrawn: "declaration",
    KittyOpened: "kitty", KittyShown: "kitty", KittyTaken: "kitty",
    KittyTakenPublic: "kitty", Buried: "kitty", BuriedPublic: "kitty",
    PreKittyAction: "kitty", CardsPassed: "kitty", CardsPassedPublic: "kitty",
    Played: "trick", ThrowFailed: "trick", TrickWon: "trick",
    DealEnded: "result", GameEnded: "result", MatchPoints: "result",
}


def _title(kind: str, events: list[Event], table: _Table) -> str:
    """A line saying what the step did, naming no card (cards are shown as cards)."""
    if kind == "deal":
        started = next((e for e in events if isinstance(e, DealStarted)), None)
        if started is None:
            return "Redeal"
        dealer = "not yet known" if started.dealer is None else f"seat {started.dealer}"
        return (f"Game {table.game + 1}, deal {started.deal + 1}: dealer {dealer}, "
                f"levels {RANK_TEXT[started.levels[0]]} / {RANK_TEXT[started.levels[1]]}")
    if kind == "dealing":
        seats = sorted({e.seat for e in events if isinstance(e, CardDealt)})
        return f"Dealing: {len(events)} card(s) to seat(s) {', '.join(map(str, seats))}"
    if kind == "declaration":
        parts = []
        for e in events:
            if isinstance(e, Declared):
                trump = "no trump" if e.trump is None else f"trump {SUITS[e.trump]}"
                parts.append(f"seat {e.seat} {'overturns' if e.overturn else 'declares'}"
                             f" ({trump})")
            elif isinstance(e, DealerSet):
                parts.append(f"seat {e.seat} is the dealer ({e.reason})")
            elif isinstance(e, Passed):
                parts.append(f"seat {e.seat} passes")
            elif isinstance(e, (TrumpSet, KittyCardDrawn)):
                parts.append(f"trump fixed: {_trump(e.trump)}")
        return "Declaration: " + "; ".join(parts)
    if kind == "kitty":
        parts = []
        for e in events:
            if isinstance(e, (KittyTaken, KittyTakenPublic)):
                parts.append(f"seat {e.seat} takes up the kitty")
            elif isinstance(e, (Buried, BuriedPublic)):
                parts.append(f"seat {e.seat} buries the kitty")
            elif isinstance(e, (KittyShown, KittyOpened)):
                parts.append("the kitty is shown")
            elif isinstance(e, (CardsPassed, CardsPassedPublic)):
                parts.append(f"seat {e.giver} passes cards to seat {e.receiver}")
            elif isinstance(e, PreKittyAction):
                parts.append(f"seat {e.seat}: {e.action}")
        return "Kitty: " + "; ".join(dict.fromkeys(parts))
    if kind == "trick":
        plays = [e for e in events if isinstance(e, Played)]
        lead = plays[0].seat if plays else None
        won = next((e for e in events if isinstance(e, TrickWon)), None)
        text = f"Trick {table.trick_no}: seat {lead} leads"
        if any(type(e) is ThrowFailed for e in events):
            text += " (a throw fails)"
        if won is not None:
            text += f", seat {won.seat} wins {won.points} point(s)"
        return text
    if kind != "result":
        return ", ".join(dict.fromkeys(type(e).__name__ for e in events))
    r = table.result
    if r is None:
        return "Game over"
    return (f"Deal result: attackers {r['attacker_points']} + kitty {r['kitty_bonus']} = "
            f"{r['attacker_total']} points; levels {r['levels'][0]} / {r['levels'][1]}")


def build_steps(events: list[Event], orders: list[TrumpContext | None] | None = None
                ) -> list[dict[str, Any]]:
    """The viewer's steps over ``events`` (one view's, in order): the deal's start, dealing
    (cut by each declaration), each declaration, the kitty, each trick, the deal's result;
    each with its events (as the record writes them, without ``visible_to``) and the table
    after them. ``orders``: the engine's trump context after each event (``trump_orders``),
    by which the hands are sorted; without it, by suit."""
    table = _Table()
    steps: list[dict[str, Any]] = []
    current: list[Event] = []
    group: str | None = None
    orders = orders or [None] * len(events)

    def close() -> None:
        nonlocal current
        if current:
            assert group is not None  # set by the event that opened the step
            steps.append({"index": len(steps), "kind": group,
                          "title": _title(group, current, table),
                          "events": [e.to_dict() for e in current], "state": table.state()})
        current = []

    for e, order in zip(events, orders):
        t = type(e)
        kind = _GROUP.get(t, "other")
        starts = (kind != group or t is DealStarted or (t is Declared and kind == group)
                  or (isinstance(e, Played) and e.lead))
        if starts:
            close()
            group = kind
        table.apply(e)
        table.order = order
        current.append(e)
        if t is TrickWon:
            close()
            group = None
    close()
    return steps


def _match(request: Request, match_id: str) -> MatchFile:
    from web.api import hidden
    store = request.app.state.store
    m = store.pages.match(match_id)
    if m is not None and m.season in hidden(request):
        raise Refused(Refusal.NOT_FOUND, f"no match record with id {match_id}")
    sealed = store.pages.sealed_by(match_id)
    if sealed:
        raise Refused(Refusal.FORBIDDEN, f"match {match_id}: {sealed_reason(sealed)}")
    try:
        match = store.results.record(match_id)
    except ValueError as e:
        raise Refused(Refusal.FAILED, f"match {match_id}: the stored record cannot be read: "
                                      f"{e}") from None
    if match is None:
        raise Refused(Refusal.NOT_FOUND, f"no match record with id {match_id}")
    return match


def seat_of(seat: str | None) -> int | None:
    if seat is None or seat == "":
        return None
    if seat not in ("0", "1", "2", "3"):
        raise Refused(Refusal.MALFORMED, f"bad parameter seat: {seat!r}: expected a seat 0-3")
    return int(seat)


def replay_of(match: MatchFile, seat: int | None) -> dict[str, Any]:
    """The replay JSON of ``match`` in the full view (``seat`` None) or as ``seat`` saw it."""
    shown = [(e, order) for e, order in zip(match.events(), trump_orders(match))
             if seat is None or e.visible(seat)]
    return {"match_id": match.match_id, "variant": match.variant, "seats": list(match.seats),
            "view": "full" if seat is None else f"seat {seat}", "seat": seat,
            "steps": build_steps([e for e, _ in shown], [order for _, order in shown])}


_ERRORS: dict[int | str, dict[str, Any]] = {400: {"description": "a bad seat (not 0-3)"},
           403: {"description": "sealed until the other matches on its cards are over"},
           404: {"description": "no such match record"}}


@router.get("/api/matches/{match_id}/replay", responses=_ERRORS)
def replay_api(request: Request, match_id: str, seat: str | None = None) -> dict[str, Any]:
    """The match's replay steps, in the full view or as ``seat`` (0-3) saw it."""
    view = seat_of(seat)
    match = _match(request, match_id)
    try:
        return replay_of(match, view)
    except ValueError as e:  # an event that cannot be read
        raise Refused(Refusal.FAILED, f"match {match_id}: the stored record cannot be read: "
                                      f"{e}") from None


@router.get("/matches/{match_id}/replay", response_class=HTMLResponse, include_in_schema=False)
def replay_page(request: Request, match_id: str, seat: str | None = None):
    """The replay viewer; it loads its steps from the API in the view asked for."""
    view = seat_of(seat)
    match = _match(request, match_id)
    return request.app.state.templates.TemplateResponse(
        request, "replay.html",
        {"match_id": match_id, "seat": view, "seats": list(match.seats),
         "variant": match.variant})
