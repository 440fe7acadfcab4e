"""single-deck's reveal (亮主, 000 section 3): one level card while the cards are dealt, only
the first reveal counting; either team's level rank in the redeal after an uprising (起义); and
the kitty flipped for the trump when nobody reveals."""

from __future__ import annotations

from ...cards import RANK_TEXT, TEXT


def reveal_ranks(level: int, uprising_levels: tuple[int, int] | None) -> set[int]:
    """The ranks a reveal may show: the level rank; in the redeal after an uprising, either
    team's level rank (6.1.2)."""
    return {level} if uprising_levels is None else set(uprising_levels)


def reveal_error(cards, level: int, standing: bool, dealing: bool = True,
                 uprising_levels: tuple[int, int] | None = None) -> str | None:
    """Why these cards are no reveal (亮主) now, or None: one level card (3.2), while the cards
    are dealt, and only the first reveal counts (3.2.2)."""
    if not dealing:
        return "a reveal happens while the cards are dealt (000 3.2)"
    if standing:
        return "only the first reveal counts (000 3.2.2)"
    if len(cards) != 1 or cards[0] >= 52 or cards[0] % 13 not in reveal_ranks(level,
                                                                            uprising_levels):
        want = ("a card of either team's level rank" if uprising_levels is not None
                else f"one level card ({RANK_TEXT[level]})")
        return f"a reveal (亮主) is {want}, not {' '.join(TEXT[c] for c in cards)}"
    return None


def reveal_dealer(seat: int, card: int, dealer: int | None,
                  uprising_levels: tuple[int, int] | None) -> int:
    """The dealer after a reveal: a known dealer stays; else the revealer deals (3.2.3), except
    that in an uprising redeal with different levels a card of the opponents' level rank makes
    the opponents dealer (6.1.2.1); with equal levels a reveal is the revealer's own."""
    if dealer is not None:
        return dealer
    if uprising_levels is not None and uprising_levels[0] != uprising_levels[1] \
            and card % 13 == uprising_levels[1 - seat % 2]:
        return (seat + 1) % 4
    return seat


def uprising_levels(s) -> tuple[int, int] | None:
    """Both teams' level ranks in the redeal after an uprising (either may be revealed),
    else None."""
    return (s.levels[0], s.levels[1]) if s.uprising else None


def may_reveal(s, seat: int) -> list[int]:
    """Level cards this seat may reveal now (only the first reveal counts, 3.2.2)."""
    if s.decl is not None:
        return []
    hand = s.hands[seat]
    lv = s.level
    if not s.uprising and not (hand[lv] or hand[13 + lv] or hand[26 + lv] or hand[39 + lv]):
        return []
    ranks = reveal_ranks(s.level, uprising_levels(s))
    return [r + 13 * su for r in ranks for su in range(4) if hand[r + 13 * su]]


def flip_suit(kitty, level: int) -> int:
    """3.4: the first level card's suit; else the suit of the lowest-ranked card (first flipped
    on ties), jokers skipped."""
    for k in kitty:
        if k < 52 and k % 13 == level:
            return k // 13
    best = None
    for k in kitty:
        if k < 52 and (best is None or k % 13 < best % 13):
            best = k
    assert best is not None  # a kitty of eight holds a suited card
    return best // 13
