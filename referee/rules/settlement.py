"""The end of a deal (结算), one shape for every family: ``DealOutcome``.

Each family's scoring fills the fields its rules know; the rest keep their neutral values.
Levels are rank indexes (0 = ``2`` ... 12 = ``A``); teams are 0 (seats 0, 2) and 1 (seats 1, 3).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DealOutcome:
    """What a finished deal does."""

    attacker_total: int
    """The attackers' points as the level table counts them (kitty bonus and penalties in)."""
    levels: tuple[int, ...]
    """Both teams' levels after the deal, by team."""
    next_dealer: int
    game_over: bool
    winner_team: int | None
    dealer_team_gain: int = 0
    """Levels the dealer team went up."""
    attacker_gain: int = 0
    """Levels the attackers went up (they deal next when they take over)."""
    kitty_bonus: int = 0
    """Points the kitty added to the attackers' total (摳底)."""
    restore_level: int | None = None
    """Two-deck: set after a J/A reset, the level the dealer team may get back next deal."""
    two_exempt: frozenset[int] = frozenset()
    """Two-deck: the teams for which 2 is not a must-play rank (restarted at 2 by the J reset
    and still there: 003 section 12 此时2非必打)."""
    match_points: tuple[int, ...] = (0, 0, 0, 0)
    """Three-deck: this deal's match points per seat (积分), the tribute included."""
    joker_units: int = 0
    """Three-deck: the kitty's jokers as level units (血), before a dry pot voids them."""
    special: str | None = None
    """Three-deck: an ending that decides the game ("shut_out", "all_points",
    "three_big_jokers"), or None."""
