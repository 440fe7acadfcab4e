"""Events: frozen records of what an action did, each with who may see it.

``private_to`` is the one seat that may see a private event (a card dealt to it, the kitty it
took up or buried); ``None`` means every seat sees it. ``visible(seat)`` answers for one seat.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from .cards import RANK_TEXT, SUITS, TEXT


def _card_list(cards) -> list[str]:
    return [TEXT[c] for c in cards]


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every event."""

    def visible(self, seat: int) -> bool:
        private = getattr(self, "private_to", None)
        if private is None or private == seat:
            return True
        return isinstance(private, tuple) and seat in private

    def to_dict(self) -> dict:
        out: dict = {"event": type(self).__name__}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("cards", "kitty", "attempted", "forced", "deck") and v is not None:
                v = _card_list(v)
            elif f.name == "card" and v is not None:
                v = TEXT[v]
            elif f.name == "trump":
                v = "none" if v is None else SUITS[v]
            elif f.name in ("level", "restore_level") and v is not None:
                v = RANK_TEXT[v]
            elif f.name == "levels":
                v = [RANK_TEXT[x] for x in v]
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out


@dataclass(frozen=True, slots=True)
class DealStarted(Event):
    deal: int
    dealer: int | None
    first_receiver: int
    levels: tuple[int, int]
    redeal: int


@dataclass(frozen=True, slots=True)
class CardDealt(Event):
    seat: int
    card: int
    private_to: int


@dataclass(frozen=True, slots=True)
class Declared(Event):
    """A declaration or overturn: the cards shown are public."""

    seat: int
    cards: tuple[int, ...]
    trump: int | None
    overturn: bool


@dataclass(frozen=True, slots=True)
class Passed(Event):
    seat: int
    decision: str
    private_to: int


@dataclass(frozen=True, slots=True)
class DealerSet(Event):
    seat: int
    level: int
    reason: str


@dataclass(frozen=True, slots=True)
class KittyOpened(Event):
    """The kitty shown to all to fix the trump (003 section 5)."""

    cards: tuple[int, ...]
    trump: int | None


@dataclass(frozen=True, slots=True)
class KittyCardDrawn(Event):
    """The random kitty card that named the trump (004); public."""

    card: int
    trump: int | None


@dataclass(frozen=True, slots=True)
class RedealDemanded(Event):
    seat: int


@dataclass(frozen=True, slots=True)
class Redealt(Event):
    reason: str


@dataclass(frozen=True, slots=True)
class KittyTaken(Event):
    seat: int
    cards: tuple[int, ...]
    private_to: int


@dataclass(frozen=True, slots=True)
class KittyTakenPublic(Event):
    """Everyone sees that a seat took up the kitty, not what is in it."""

    seat: int


@dataclass(frozen=True, slots=True)
class Buried(Event):
    seat: int
    cards: tuple[int, ...]
    private_to: int


@dataclass(frozen=True, slots=True)
class BuriedPublic(Event):
    seat: int


@dataclass(frozen=True, slots=True)
class ThrowFailed(Event):
    seat: int
    attempted: tuple[int, ...]
    forced: tuple[int, ...]
    penalty: int


@dataclass(frozen=True, slots=True)
class Played(Event):
    seat: int
    cards: tuple[int, ...]
    lead: bool


@dataclass(frozen=True, slots=True)
class TrickWon(Event):
    seat: int
    points: int
    trick: int


@dataclass(frozen=True, slots=True)
class DealEnded(Event):
    deal: int
    kitty: tuple[int, ...]
    attacker_points: int
    kitty_bonus: int
    penalties: tuple[int, int]
    attacker_total: int
    levels: tuple[int, int]
    next_dealer: int
    restore_level: int | None


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    winner_team: int | None
    levels: tuple[int, int]
    deals: int


@dataclass(frozen=True, slots=True)
class KittyShown(Event):
    """The kitty shown face up to everyone (single-deck 3.5; three-deck after a declaration)."""

    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TrumpSet(Event):
    """The trump suit fixed (three-deck first deal: the grabber's next suited card)."""

    trump: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class PreKittyAction(Event):
    """A public pre-kitty action (single-deck 6.1-6.3, 4.2.3.2) or joker burial (three-deck)."""

    seat: int
    action: str
    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CardsPassed(Event):
    """Cards handed between two seats (a lone-trump transfer, a tribute, a return): only the two
    see which cards."""

    giver: int
    receiver: int
    cards: tuple[int, ...]
    reason: str
    private_to: tuple[int, int]


@dataclass(frozen=True, slots=True)
class CardsPassedPublic(Event):
    giver: int
    receiver: int
    count: int
    reason: str


@dataclass(frozen=True, slots=True)
class MatchPoints(Event):
    """three-deck (积分): this deal's match points and the cumulative totals per seat."""

    deal_points: tuple[int, int, int, int]
    totals: tuple[int, int, int, int]
    titles: tuple[str, str, str, str]
