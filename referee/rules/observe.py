"""What one seat may see (``observe(state, seat)``): its own hand, every public reveal, every card
played, the points taken, and the kitty only if it buried it (or the kitty was opened to all).
Nothing in an ``Observation`` depends on a card hidden from that seat."""

from __future__ import annotations

from dataclasses import dataclass

from .actions import DecisionKind
from .frozen import slot_constructor
from .state import CHANCE, P_BURY, State


@dataclass(frozen=True, slots=True)
class Observation:
    """One seat's view of the game at one moment."""

    seat: int
    variant: str
    deal: int
    phase: str
    to_act: int | None              # the seat to act, or None for chance / game over
    decision: DecisionKind | None   # the decision kind, only when it is this seat's turn
    levels: tuple[int, int]         # team 0 (seats 0, 2), team 1 (seats 1, 3)
    dealer: int | None
    level: int
    trump: int | None               # trump suit, None for no-trump or not yet fixed
    trump_fixed: bool
    first_receiver: int | None
    hand: tuple[int, ...]
    hand_sizes: tuple[int, int, int, int]
    cards_dealt: int
    declarations: tuple[tuple[int, tuple[int, ...]], ...]   # (seat, cards shown), in order
    public_kitty: tuple[int, ...]   # a kitty opened to everyone (003 section 5)
    drawn_kitty_card: int | None    # 004: the card that named the trump
    my_kitty: tuple[int, ...]       # the kitty this seat buried last (empty otherwise)
    kitty_holder: int | None
    redeals: int
    trick_leader: int | None
    trick: tuple[tuple[int, tuple[int, ...]], ...]
    tricks: tuple                    # completed tricks: (((seat, cards), ...), winner)
    attacker_points: int
    penalties: tuple[int, int]
    winner_team: int | None
    hard_duns: tuple[int, ...]       # single-deck: ranks of the duns the dealer showed
    dry_pot: bool                    # three-deck: the public kitty is a dry pot (干锅)
    match_points: tuple[int, int, int, int]  # three-deck: cumulative match points (积分)


_new_observation = slot_constructor(Observation)
"""``Observation(...)`` made quickly: a view is made at every decision."""

_PUBLIC_TURNS = frozenset({DecisionKind.LEAD, DecisionKind.FOLLOW, DecisionKind.BURY})


def _public_turn(s: State, seat: int) -> int | None:
    """Whose turn it is, where everyone knows it. A declaration or redeal chance exists only
    because of the cards a seat holds, so only that seat learns of it."""
    if s.turn < 0:
        return None
    if s.turn == seat or s.decision in _PUBLIC_TURNS:
        return s.turn
    return None


def observe(s: State, seat: int) -> Observation:
    """The view of ``seat``; see the module docstring."""
    mine = s.kitty_owner == seat and s.phase != P_BURY
    return _new_observation(  # the fields in their order
        seat,                                                  # seat
        s.rules.variant,                                       # variant
        s.deal_no,                                             # deal
        s.phase,                                               # phase
        _public_turn(s, seat),                                 # to_act
        s.decision if s.turn == seat else None,                # decision
        s.levels,                                              # levels
        s.dealer,                                              # dealer
        s.level,                                               # level
        s.trump,                                               # trump
        s.ctx is not None,                                     # trump_fixed
        s.first_receiver,                                      # first_receiver
        s.hand(seat),                                          # hand
        tuple(map(sum, s.hands)),                              # hand_sizes
        s.next_card,                                           # cards_dealt
        tuple([(d.seat, d.cards) for d in s.declarations]),    # declarations
        tuple(s.kitty) if s.kitty_public else s.opened_kitty,  # public_kitty
        s.drawn_card,                                          # drawn_kitty_card
        tuple(sorted(s.kitty)) if mine else (),                # my_kitty
        s.kitty_owner,                                         # kitty_holder
        s.redeals,                                             # redeals
        s.leader if s.trick else None,                         # trick_leader
        s.trick,                                               # trick
        s.tricks,                                              # tricks
        s.attacker_points,                                     # attacker_points
        s.penalties,                                           # penalties
        s.winner_team,                                         # winner_team
        tuple(sorted(s.hard_duns)) if s.hard_duns else (),     # hard_duns
        s.dry_pot,                                             # dry_pot
        s.match_points,                                        # match_points
    )


__all__ = ["Observation", "observe", "CHANCE"]
