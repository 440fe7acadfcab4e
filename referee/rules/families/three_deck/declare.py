"""three-deck's declarations: on the first deal the first big joker shown grabs the deal
(抢亮大王), or, when nobody grabs, the kitty flip names the dealer and the trump; on later deals
1-3 level cards or three jokers, each overturned by a strictly stronger showing."""

from __future__ import annotations

from typing import NamedTuple

from ...actions import Declare
from ...cards import BIG_JOKER, LITTLE_JOKER, RANK_TEXT, TEXT
from ...state import Declaration


def declaration_shape(cards, level: int, suit: int | None):
    """(strength, suit) of 1-3 identical level cards (1-3) or three LJ (4) / BJ (5) naming a
    suit."""
    n = len(cards)
    if n == 0 or n > 3 or any(k != cards[0] for k in cards):
        return None
    k = cards[0]
    if k >= 52:
        if n != 3 or suit is None:
            return None
        return (4 if k == LITTLE_JOKER else 5), suit
    if k % 13 != level or suit not in (None, k // 13):
        return None
    return n, k // 13


class Situation(NamedTuple):
    """The facts a three-deck declaration is judged on (a tuple: it is made for every card
    dealt that might be declared)."""

    first_deal: bool
    """The first deal: a big joker shown grabs the deal (抢亮大王)."""
    grabbed: bool
    """A big joker was already shown on the first deal."""
    current: Declaration | None
    """The standing declaration of a later deal."""
    level: int
    """The dealer team's level rank."""


def situation(s, seat: int) -> Situation:
    """The facts a declaration by ``seat`` is judged on now."""
    return Situation(s.first_deal, s.grabber is not None, s.decl, s.level)


def judge_declaration(sit: Situation, seat: int, cards, suit: int | None = None):
    """(reason, Declaration or None) for a declaration of ``cards`` (three jokers name ``suit``)
    by ``seat``."""
    shown = " ".join(TEXT[c] for c in cards)
    level, current = sit.level, sit.current
    if sit.first_deal:
        if tuple(cards) != (BIG_JOKER,):
            return ("on the first deal the dealer is decided by the first big joker shown "
                    "(抢亮大王): show one BJ"), None
        if sit.grabbed:
            return "a big joker was already shown: the first grab decides", None
        return None, Declaration(seat, (BIG_JOKER,), 0, None, False)
    shape = declaration_shape(cards, level, suit)
    if shape is None:
        return (f"{shown} is not a declaration: expected 1-3 identical {RANK_TEXT[level]} "
                "cards of one suit, or three LJ / three BJ naming a suit"), None
    strength, named = shape
    # 001 有人亮牌後自己和其他人都可以反: anyone, the declarer included, overturns with a strictly
    # stronger showing, in any suit
    if current is not None and strength <= current.strength:
        return (f"{shown} does not beat the standing "
                f"{' '.join(TEXT[c] for c in current.cards)} (1 < 2 < 3 level cards < "
                "three LJ < three BJ)"), None
    return None, Declaration(seat, tuple(cards), strength, named, current is not None)


def declaration_options(s, seat: int) -> list[Declare]:
    hand = s.hands[seat]
    if s.first_deal:
        if s.grabber is None and hand[BIG_JOKER]:
            return [Declare((BIG_JOKER,))]
        return []
    out = []
    lv = s.level
    sit = situation(s, seat)
    for su in range(4):
        k = su * 13 + lv
        for n in range(1, min(3, hand[k]) + 1):
            out.append(Declare((k,) * n))
    for j in (LITTLE_JOKER, BIG_JOKER):
        if hand[j] >= 3:
            out.extend(Declare((j, j, j), su) for su in range(4))
    return [d for d in out
            if judge_declaration(sit, seat, d.cards, d.suit)[0] is None]


def may_declare(s, seat: int) -> bool:
    """Whether ``declaration_options(s, seat)`` has any, without listing them (asked for every
    card dealt): the strongest showing the hand holds must beat the standing one."""
    hand = s.hands[seat]
    if s.first_deal:
        return s.grabber is None and hand[BIG_JOKER] > 0
    if hand[BIG_JOKER] >= 3:
        best = 5
    elif hand[LITTLE_JOKER] >= 3:
        best = 4
    else:
        lv = s.level
        best = min(3, max(hand[lv], hand[13 + lv], hand[26 + lv], hand[39 + lv]))
        if not best:
            return False
    return s.decl is None or best > s.decl.strength


def _flip_value(k: int) -> int:
    """Flip order 3 < 4 < ... < A < 2."""
    return (k % 13 - 1) % 13


def first_dealer(kitty, first_seat: int, mode: str) -> tuple[int, int | None]:
    """Each seat from ``first_seat`` flips a kitty card (a joker flips again); the lowest (or
    highest) card's flipper deals and its suit is trump; ties: the first flipper."""
    flips: list[tuple[int, int]] = []
    seat = first_seat
    for k in kitty:
        if len(flips) == 4:
            break
        if k >= 52:
            continue
        flips.append((seat, k))
        seat = (seat + 1) % 4
    if not flips:
        return first_seat, None
    pick = min if mode == "lowest" else max
    best = pick(_flip_value(k) for _, k in flips)
    seat, k = next((x, k) for x, k in flips if _flip_value(k) == best)
    return seat, k // 13
