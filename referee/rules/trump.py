"""Trump context: the level rank and the trump suit (or no-trump), and the strength order they
induce on the 54 kinds of card.

Every card belongs to one *suit class*: 0-3 for the side suits (副牌) and ``TRUMP`` (4) for trumps
(主牌: jokers, every level card, the trump suit). Within a class, ``pos`` is the strength: a higher
number is stronger, equal numbers are equally strong (off-suit level cards), and two consecutive
numbers are adjacent for tractors (the level rank is skipped in every suit; the trump chain runs
trump-suit cards ... A, off-suit level cards, trump-suit level card, LJ, BJ). Contexts are cached:
the engine looks strength up in tuples, never computes it during play.
"""

from __future__ import annotations

from functools import lru_cache

from .cards import BIG_JOKER, LITTLE_JOKER, RANK_TEXT, SUITS

TRUMP = 4


class TrumpContext:
    """Tables for one (level rank, trump suit) pair; build with ``trump_context``."""

    __slots__ = ("level", "suit", "cls", "pos", "key", "members", "kinds", "order")

    def __init__(self, level: int, suit: int | None, permanent_two: bool = False,
                 linked_levels: bool = True) -> None:
        self.level = level
        self.suit = suit
        cls = [0] * 54
        pos = [0] * 54
        side_pos = {}
        n = 0
        for rank in range(13):
            if rank != level and not (permanent_two and rank == 0):
                side_pos[rank] = n
                n += 1
        # three-deck (001 section 7): every 2 is a trump, between the trump suit and the level
        # cards: trump-suit 2 above the other 2s, which are equal
        if permanent_two:
            n += 2
        gap = 0 if linked_levels else 1  # unlinked: no tractor from the side A up to BJ but LJ-BJ
        n += gap
        for kind in range(52):
            s, r = divmod(kind, 13)
            if r == level:
                cls[kind] = TRUMP
                # trump-suit level above the others
                pos[kind] = n + 1 + gap if s == suit else n
            elif permanent_two and r == 0:
                cls[kind] = TRUMP
                pos[kind] = n - 1 if s == suit else n - 2
            elif s == suit:
                cls[kind] = TRUMP
                pos[kind] = side_pos[r]
            else:
                cls[kind] = s
                pos[kind] = side_pos[r]
        top = n + 1 + gap if suit is not None else n
        cls[LITTLE_JOKER] = cls[BIG_JOKER] = TRUMP
        pos[LITTLE_JOKER] = top + 1 + gap
        pos[BIG_JOKER] = top + 2 + gap
        self.cls = tuple(cls)
        self.pos = tuple(pos)
        # A total order for sorting: class first (trumps highest), then strength, then kind.
        self.key = tuple(cls[k] * 4096 + pos[k] * 64 + k for k in range(54))
        #: Every kind, weakest first: sorted by ``key`` once (hands are listed in this order).
        self.order = tuple(sorted(range(54), key=self.key.__getitem__))
        #: The kinds of each suit class, strongest first.
        self.members = tuple(
            tuple(sorted((k for k in range(54) if cls[k] == c), key=self.key.__getitem__,
                         reverse=True))
            for c in range(5))
        #: The kinds of each suit class in ascending kind order (the order of listings).
        self.kinds = tuple(tuple(sorted(m)) for m in self.members)

    def is_trump(self, kind: int) -> bool:
        return self.cls[kind] == TRUMP

    def describe(self) -> str:
        """``level 4, trump S`` / ``level 4, no-trump``."""
        t = "no-trump" if self.suit is None else f"trump {SUITS[self.suit]}"
        return f"level {RANK_TEXT[self.level]}, {t}"

    def class_name(self, c: int) -> str:
        """Readable name of a suit class: ``trumps`` or ``hearts``."""
        return "trumps" if c == TRUMP else SUIT_NAMES[c]

    def __repr__(self) -> str:
        return f"TrumpContext({self.describe()})"


SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")


@lru_cache(maxsize=None)
def trump_context(level: int, suit: int | None, permanent_two: bool = False,
                  linked_levels: bool = True) -> TrumpContext:
    """The cached context for level rank index ``level`` and trump suit ``suit`` (None: no-trump);
    ``permanent_two`` makes every 2 a trump (three-deck); ``linked_levels`` false leaves a gap of
    strength between the side cards of the trump suit, the off-suit level cards, the trump-suit
    level card and the jokers (only LJ and BJ stay neighbours), so no tractor runs across them."""
    return TrumpContext(level, suit, permanent_two, linked_levels)
