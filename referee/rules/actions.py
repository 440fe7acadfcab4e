"""Actions: what a seat (or chance) does at a decision, as frozen values with a text form that
round-trips (``Action.parse('play AH AH')``).

Chance is an input: ``Shuffle`` (the deck order, and the first receiver where the variant draws it)
and ``DrawKittyCard`` (the random kitty card of 004) are applied like any other action, so a record
of actions replays a match exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from .cards import SUITS, TEXT, parse_cards
from .errors import InvalidActionError


class DecisionKind(str, Enum):
    """What kind of decision the state is waiting for."""

    SHUFFLE = "shuffle"
    """Chance: the deck order for the next deal (洗牌)."""
    DRAW_KITTY_CARD = "draw_kitty_card"
    """Chance: which kitty card names the trump when nobody declared (004 无人报主)."""
    UPRISING = "uprising"
    """single-deck: a seat with no trump (dealer team) or no points (attackers) may rise (起义)."""
    HANDOVER = "handover"
    """single-deck: a dealer with 3 trumps or fewer may hand the deal to its partner (打不起)."""
    TRANSFER = "transfer"
    """single-deck: a seat with exactly one trump may pass it to its partner (渡)."""
    RETURN = "return"
    """Give back cards: a side card for a transferred trump, or the return of a tribute."""
    DUN_REVEAL = "dun_reveal"
    """single-deck: the dealer may show a dun of its original 12 so it stays hard."""
    JOKER_BURY = "joker_bury"
    """three-deck: a seat may bury jokers into the kitty, taking back its lowest cards."""
    DECLARE = "declare"
    """A seat may declare a trump (亮主 / 报主) or overturn (反主), or pass."""
    REDEAL = "redeal"
    """An attacker with few points may demand a redeal (暴动, 004), or pass."""
    BURY = "bury"
    """The seat holding the kitty buries that many cards (扣底)."""
    LEAD = "lead"
    """The seat leads a trick (首家出牌)."""
    FOLLOW = "follow"
    """The seat follows the trick (跟牌)."""
    GAME_OVER = "game_over"
    """Nothing more: the game has ended."""


CHANCE_KINDS = frozenset({DecisionKind.SHUFFLE, DecisionKind.DRAW_KITTY_CARD})


def _cards_text(cards) -> str:
    return " ".join(TEXT[c] for c in cards)


class _ActionText:
    """The text form every action shares: ``str`` is ``text()``, ``repr`` round-trips through
    ``parse`` (``Play.parse('play AH AH')``)."""

    __slots__ = ()

    def text(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.parse({self.text()!r})"

    @classmethod
    def parse(cls, text: str):
        """The action written as ``text``, which must be of this kind."""
        action = parse_action(text)
        if not isinstance(action, cls):
            raise InvalidActionError(f"{text!r} is a {type(action).__name__} action, not a "
                                     f"{cls.__name__}")
        return action


@dataclass(frozen=True, slots=True, repr=False)
class Shuffle(_ActionText):
    """Chance: the deck order; ``first_seat`` is the first receiver where the variant draws one."""

    deck: tuple[int, ...]
    first_seat: int | None = None

    def text(self) -> str:
        first = "-" if self.first_seat is None else str(self.first_seat)
        return f"shuffle {first} {_cards_text(self.deck)}"


@dataclass(frozen=True, slots=True, repr=False)
class DrawKittyCard(_ActionText):
    """Chance: the kitty card (by index in the kitty) that names the trump."""

    index: int

    def text(self) -> str:
        return f"draw {self.index}"


@dataclass(frozen=True, slots=True, repr=False)
class _Word(_ActionText):
    """An action that is its kind alone: its text is its word."""

    WORD: ClassVar[str] = ""

    def text(self) -> str:
        return self.WORD


def _cards_init(self: Any, cards: tuple[int, ...]) -> None:
    """The ``__init__`` of a kind whose one field is ``cards`` (``init=False``): what the
    dataclass's ``__init__`` and ``__post_init__`` do, in one frame (a play is made for every
    decision of every random player and search)."""
    object.__setattr__(self, "cards", tuple(sorted(cards)))


@dataclass(frozen=True, slots=True, repr=False)
class _Cards(_ActionText):
    """An action of a multiset of cards: the same cards in any order are the same action."""

    cards: tuple[int, ...]
    WORD: ClassVar[str] = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "cards", tuple(sorted(self.cards)))

    def text(self) -> str:
        return f"{self.WORD} {_cards_text(self.cards)}"


@dataclass(frozen=True, slots=True, repr=False)
class Pass(_Word):
    """Decline a declaration, an overturn or a redeal."""

    WORD = "pass"


@dataclass(frozen=True, slots=True, repr=False)
class Declare(_Cards):
    """Show cards to declare a trump or overturn (反主); ``suit`` is the suit three jokers name
    (three-deck)."""

    suit: int | None = None
    WORD = "declare"

    def text(self) -> str:
        named = "" if self.suit is None else f" {SUITS[self.suit]}"
        return f"{_Cards.text(self)}{named}"


@dataclass(frozen=True, slots=True, repr=False)
class Redeal(_Word):
    """Demand a redeal (暴动)."""

    WORD = "redeal"


@dataclass(frozen=True, slots=True, repr=False, init=False)
class Bury(_Cards):
    """Bury these cards as the kitty."""

    WORD = "bury"
    __init__ = _cards_init


@dataclass(frozen=True, slots=True, repr=False, init=False)
class Play(_Cards):
    """Lead or follow with these cards."""

    WORD = "play"
    __init__ = _cards_init


@dataclass(frozen=True, slots=True, repr=False)
class Uprising(_Word):
    """Rise (起义): the deal is redealt with no dealer."""

    WORD = "uprising"


@dataclass(frozen=True, slots=True, repr=False)
class HandOver(_Word):
    """Hand the kitty and the deal to the partner (打不起)."""

    WORD = "handover"


@dataclass(frozen=True, slots=True, repr=False, init=False)
class Transfer(_Cards):
    """Pass the one trump to the partner (渡)."""

    WORD = "transfer"
    __init__ = _cards_init


@dataclass(frozen=True, slots=True, repr=False, init=False)
class Return(_Cards):
    """Give cards back (for a transferred trump, or for a tribute)."""

    WORD = "return"
    __init__ = _cards_init


@dataclass(frozen=True, slots=True, repr=False, init=False)
class RevealDun(_Cards):
    """Show a dun (礅) of the original hand so that it stays hard."""

    WORD = "reveal"
    __init__ = _cards_init


@dataclass(frozen=True, slots=True, repr=False)
class BuryJokers(_ActionText):
    """Bury jokers into the kitty and take back as many of its lowest cards (``take`` empty:
    the referee picks them, as a seat that has not seen the kitty must let it)."""

    jokers: tuple[int, ...]
    take: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "jokers", tuple(sorted(self.jokers)))
        object.__setattr__(self, "take", tuple(sorted(self.take)))

    def text(self) -> str:
        if not self.take:  # the referee takes back the lowest cards
            return f"jokers {_cards_text(self.jokers)}"
        return f"jokers {_cards_text(self.jokers)} take {_cards_text(self.take)}"


Action = (Shuffle | DrawKittyCard | Pass | Declare | Redeal | Bury | Play | Uprising | HandOver
          | Transfer | Return | RevealDun | BuryJokers)

_BY_WORD: dict[str, Any] = {kind.WORD: kind for kind in (Pass, Redeal, Uprising, HandOver, Bury, Play, Transfer,
                                          Return, RevealDun)}
"""The actions whose text is their word, alone or before their cards."""
_WORDS = ("shuffle", "draw", "pass", "declare", "redeal", "bury", "play", "uprising",
          "handover", "transfer", "return", "reveal", "jokers")


def parse_action(text: str) -> Action:
    """The action written as ``text``; raises ``InvalidActionError`` naming what was wrong."""
    try:
        return _parse_action(text)
    except InvalidActionError as e:
        if isinstance(text, str) and text.strip() and repr(text) not in str(e):
            raise InvalidActionError(f"in action {text!r}: {e}") from None
        raise


def _parse_action(text: str) -> Action:
    if not isinstance(text, str) or not text.strip():
        raise InvalidActionError(f"empty action {text!r}: expected one of {', '.join(_WORDS)}")
    word, _, rest = text.strip().partition(" ")
    word = word.lower()
    rest = rest.strip()
    kind = _BY_WORD.get(word)
    if kind is not None:
        if issubclass(kind, _Cards):
            return kind(parse_cards(rest))
        if not rest:
            return kind()
    if word == "declare":
        tokens = rest.split()
        if tokens and tokens[-1].upper() in ("S", "H", "D", "C"):
            return Declare(parse_cards(tokens[:-1]), SUITS.index(tokens[-1].upper()))
        return Declare(parse_cards(rest))
    if word == "jokers":
        jokers, _, take = rest.partition(" take ")
        return BuryJokers(parse_cards(jokers), parse_cards(take))
    if word == "draw":
        try:
            return DrawKittyCard(int(rest))
        except ValueError:
            raise InvalidActionError(f"malformed action {text!r}: expected 'draw N'") from None
    if word == "shuffle":
        first, _, cards = rest.partition(" ")
        if first != "-" and not first.isdigit():
            raise InvalidActionError(
                f"malformed action {text!r}: expected 'shuffle SEAT|- CARDS...'")
        return Shuffle(parse_cards(cards), None if first == "-" else int(first))
    raise InvalidActionError(
        f"malformed action {text!r}: expected one of {', '.join(_WORDS)} (with cards where "
        f"needed, e.g. 'play AH AH')")
