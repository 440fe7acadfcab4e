"""Cards as a bot reasons about them: the rules engine's card strength, trick winners and burial
limits, from what a request's observation says (the variant id, the level and the trump as text).

    from arena_sdk.cards import TRUMP, card_order, cards, trick_winner

    ctx = card_order(obs.variant, obs.level, obs.trump)
    hand = cards(obs.hand)                        # ints, as the engine keeps cards
    ctx.cls[c] == TRUMP, ctx.pos[c]               # a card's suit class and strength
    trick_winner(obs.variant, ctx, [cards(p.cards) for p in obs.trick])

A card is an int: ``c // 13`` its suit (``SUITS``), ``c % 13`` its rank (``RANK_TEXT``) for
``c < 52`` (a card of any deck), 52 and 53 the little and big jokers; ``text(c)`` is its wire
form (``"10H"``, ``"LJ"``). These are the engine's own (``referee.rules``), which the SDK carries.
"""

from __future__ import annotations

from collections.abc import Iterable

from referee.rules.cards import POINTS, RANK_TEXT, SUITS, Card
from referee.rules.helpers import TRUMP, bury_limits, card_order, rules_of, trick_winner

__all__ = ["POINTS", "RANK_TEXT", "SUITS", "TRUMP", "Card", "bury_limits", "card", "card_order",
           "cards", "points", "rules_of", "text", "trick_winner"]


def card(wire: str) -> int:
    """A card from its wire form (``"10H"``, ``"BJ"``)."""
    return int(Card.parse(wire))


def cards(wires: Iterable[str]) -> tuple[int, ...]:
    """Cards from their wire forms (a hand, a play)."""
    return tuple(int(Card.parse(w)) for w in wires)


def text(c: int) -> str:
    """A card's wire form."""
    return str(Card(c))


def points(cs: Iterable[int]) -> int:
    """The points the cards are worth (5s, 10s and kings)."""
    return sum(POINTS[c] for c in cs)
