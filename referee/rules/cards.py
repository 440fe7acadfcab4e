"""Cards and their text form.

A card is an ``int`` from 0 to 53 (``suit * 13 + rank`` for the 52 suited cards, 52 for the little
joker 小王 and 53 for the big joker 大王). With several decks, identical cards are simply repeated.
``Card`` is a slotted ``int`` subclass, so it is hashable and frozen, sorts and indexes like an int,
and prints as its text form: ``Card.parse('10H')`` round-trips through ``str``.
"""

from __future__ import annotations

from typing import Iterable

from .errors import InvalidActionError

SUITS = "SHDC"
"""Suit letters in index order: spades, hearts, diamonds, clubs (S and C black, H and D red)."""
RANK_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
LITTLE_JOKER = 52
BIG_JOKER = 53
KINDS = 54

_POINTS_BY_RANK = {3: 5, 8: 10, 11: 10}  # 5, 10, K


class Card(int):
    """One card; see the module docstring for the encoding."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> "Card":
        """The card written as ``text`` (``10H``, ``QS``, ``LJ``, ``BJ``); raises ``InvalidActionError``."""
        try:
            return _BY_TEXT[text.strip().upper()]
        except (KeyError, AttributeError):
            raise InvalidActionError(
                f"malformed card {text!r}: expected a rank (2-10, J, Q, K, A) followed by a suit "
                f"(S, H, D, C), or LJ / BJ") from None

    @property
    def rank(self) -> int | None:
        """Rank index 0 (``2``) .. 12 (``A``); ``None`` for a joker."""
        return None if self >= 52 else self % 13

    @property
    def suit(self) -> int | None:
        """Suit index into ``SUITS``; ``None`` for a joker."""
        return None if self >= 52 else self // 13

    @property
    def points(self) -> int:
        """Face points: 5 for a five, 10 for a ten or a king."""
        return POINTS[self]

    def __str__(self) -> str:
        return TEXT[self]

    def __repr__(self) -> str:
        return f"Card.parse({TEXT[self]!r})"


TEXT: tuple[str, ...] = tuple(
    [RANK_TEXT[k % 13] + SUITS[k // 13] for k in range(52)] + ["LJ", "BJ"])
CARDS: tuple[Card, ...] = tuple(Card(k) for k in range(KINDS))
POINTS: tuple[int, ...] = tuple(_POINTS_BY_RANK.get(k % 13, 0) if k < 52 else 0 for k in range(KINDS))
_BY_TEXT = {t: CARDS[k] for k, t in enumerate(TEXT)}


def card(rank: int, suit: int) -> Card:
    """The suited card of rank index ``rank`` and suit index ``suit``."""
    return CARDS[suit * 13 + rank]


def parse_cards(texts: Iterable[str] | str) -> tuple[Card, ...]:
    """Cards from a list of texts or one space-separated string."""
    if isinstance(texts, str):
        texts = texts.split()
    return tuple(Card.parse(t) for t in texts)


def format_cards(cards: Iterable[int]) -> str:
    """Space-separated text form."""
    return " ".join(TEXT[c] for c in cards)


def full_deck(decks: int) -> tuple[Card, ...]:
    """``decks`` complete decks in kind order (shuffle it outside the engine)."""
    return CARDS * decks


def parse_rank(text: str) -> int:
    """Rank index of ``2`` .. ``A``; raises ``ValueError`` naming what was expected."""
    try:
        return RANK_TEXT.index(str(text).strip().upper())
    except ValueError:
        raise ValueError(f"malformed level {text!r}: expected one of {' '.join(RANK_TEXT)}") from None


def parse_suit(text: str) -> int | None:
    """Suit index of ``S H D C``; ``None`` for ``none`` (no-trump)."""
    t = str(text).strip().upper()
    if t in ("NONE", "NT", ""):
        return None
    if len(t) == 1 and t in SUITS:
        return SUITS.index(t)
    raise ValueError(f"malformed trump {text!r}: expected S, H, D, C or none")
