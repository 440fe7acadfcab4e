"""Events: frozen records of what an action did, each with who may see it.

``private_to`` is the one seat (or the tuple of seats) that may see a private event (a card dealt
to it, the kitty it took up or buried, cards passed between two seats); without it every seat sees
the event. ``visible(seat)`` answers for one seat.

Events are made on every action of every match, so each is a named tuple underneath: immutable,
hashable, and quick to build; two events are equal only when they are of the same kind.
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING, Any, Iterator, TypeVar, dataclass_transform

from .cards import RANK_TEXT, SUITS, TEXT, Card, parse_cards


def _card_list(cards) -> list[str]:
    return [TEXT[c] for c in cards]


class Event:
    """Base of every event."""

    __slots__ = ()
    _fields: tuple[str, ...]

    if TYPE_CHECKING:  # a named tuple underneath (``event``)
        def __iter__(self) -> Iterator[Any]: ...

    def visible(self, seat: int) -> bool:
        private = getattr(self, "private_to", None)
        if private is None or private == seat:
            return True
        return isinstance(private, tuple) and seat in private

    def to_dict(self) -> dict:
        out: dict = {"event": type(self).__name__}
        for name, v in zip(self._fields, self):
            if name in ("cards", "kitty", "attempted", "forced", "deck") and v is not None:
                v = _card_list(v)
            elif name == "card" and v is not None:
                v = TEXT[v]
            elif name == "trump":
                v = "none" if v is None else SUITS[v]
            elif name in ("level", "restore_level") and v is not None:
                v = RANK_TEXT[v]
            elif name == "levels":
                v = [RANK_TEXT[x] for x in v]
            elif isinstance(v, tuple):
                v = list(v)
            out[name] = v
        return out

    @staticmethod
    def from_dict(data: dict) -> "Event":
        """The event a ``to_dict()`` form describes (a record's ``visible_to`` is ignored: it
        follows from the event); raises ``ValueError`` naming what is wrong."""
        kind = data.get("event") if isinstance(data, dict) else None
        cls = _EVENT_TYPES.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise ValueError(f"unknown event {kind!r}")
        extra = set(data) - {"event", "visible_to"} - set(cls._fields)
        if extra:
            raise ValueError(f"event {kind}: unknown field(s) {sorted(extra)}")
        values = []
        for name in cls._fields:
            if name not in data:
                raise ValueError(f"event {kind}: missing field {name!r}")
            v = data[name]
            if name in ("cards", "kitty", "attempted", "forced", "deck") and v is not None:
                v = tuple(int(c) for c in parse_cards(v))
            elif name == "card" and v is not None:
                v = int(Card.parse(v))
            elif name == "trump":
                v = None if v == "none" else SUITS.index(v)
            elif name in ("level", "restore_level") and v is not None:
                v = RANK_TEXT.index(v)
            elif name == "levels":
                v = tuple(RANK_TEXT.index(x) for x in v)
            else:
                v = _tuples(v)
            values.append(v)
        return cls(*values)


def _tuples(v):
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


_EVENT_TYPES: dict[str, Any] = {}


def _eq(self, other):
    return type(self) is type(other) and tuple.__eq__(self, other)


def _ne(self, other):
    return not _eq(self, other)


_E = TypeVar("_E")


@dataclass_transform(frozen_default=True)
def event(cls: type[_E]) -> type[_E]:
    """Turn an annotated class into an event type with those fields, in that order."""
    base = namedtuple(cls.__name__, list(cls.__annotations__))  # type: ignore[misc]
    ns = {"__slots__": (), "__doc__": cls.__doc__, "__module__": cls.__module__,
          "__eq__": _eq, "__ne__": _ne, "__hash__": tuple.__hash__}
    made = type(cls.__name__, (base, Event), ns)
    _EVENT_TYPES[cls.__name__] = made  # the types of this module, for reading events back
    return made


@event
class DealStarted(Event):
    deal: int
    dealer: int | None
    first_receiver: int
    levels: tuple[int, ...]
    redeal: int


@event
class CardDealt(Event):
    seat: int
    card: int
    private_to: int


@event
class Declared(Event):
    """A declaration or overturn: the cards shown are public."""

    seat: int
    cards: tuple[int, ...]
    trump: int | None
    overturn: bool


@event
class Passed(Event):
    seat: int
    decision: str
    private_to: int


@event
class DealerSet(Event):
    seat: int
    level: int
    reason: str


@event
class KittyOpened(Event):
    """The kitty shown to all to fix the trump (003 section 5)."""

    cards: tuple[int, ...]
    trump: int | None


@event
class KittyCardDrawn(Event):
    """The random kitty card that named the trump (004); public."""

    card: int
    trump: int | None


@event
class RedealDemanded(Event):
    seat: int


@event
class Redealt(Event):
    reason: str


@event
class KittyTaken(Event):
    seat: int
    cards: tuple[int, ...]
    private_to: int


@event
class KittyTakenPublic(Event):
    """Everyone sees that a seat took up the kitty, not what is in it."""

    seat: int


@event
class Buried(Event):
    seat: int
    cards: tuple[int, ...]
    private_to: int | None


@event
class BuriedPublic(Event):
    seat: int


@event
class ThrowFailed(Event):
    seat: int
    attempted: tuple[int, ...]
    forced: tuple[int, ...]
    penalty: int


@event
class Played(Event):
    seat: int
    cards: tuple[int, ...]
    lead: bool


@event
class TrickWon(Event):
    seat: int
    points: int
    trick: int


@event
class DealEnded(Event):
    deal: int
    kitty: tuple[int, ...]
    attacker_points: int
    kitty_bonus: int
    penalties: tuple[int, ...]
    attacker_total: int
    levels: tuple[int, ...]
    next_dealer: int
    restore_level: int | None


@event
class GameEnded(Event):
    winner_team: int | None
    levels: tuple[int, ...]
    deals: int


@event
class KittyShown(Event):
    """The kitty shown face up to everyone (single-deck 3.5; three-deck after a declaration)."""

    cards: tuple[int, ...]


@event
class TrumpSet(Event):
    """The trump suit fixed (three-deck first deal: the grabber's next suited card)."""

    trump: int | None
    reason: str


@event
class PreKittyAction(Event):
    """A public pre-kitty action (single-deck 6.1-6.3, 4.2.3.2) or joker burial (three-deck)."""

    seat: int
    action: str
    cards: tuple[int, ...]


@event
class CardsPassed(Event):
    """Cards handed between two seats (a lone-trump transfer, a tribute, a return): only the two
    see which cards."""

    giver: int
    receiver: int
    cards: tuple[int, ...]
    reason: str
    private_to: tuple[int, int]


@event
class CardsPassedPublic(Event):
    giver: int
    receiver: int
    count: int
    reason: str


@event
class MatchPoints(Event):
    """three-deck (积分): this deal's match points and the cumulative totals per seat."""

    deal_points: tuple[int, int, int, int]
    totals: tuple[int, int, int, int]
    titles: tuple[str, ...]
