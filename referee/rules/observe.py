"""What one seat may see (``observe(state, seat)``): its own hand, every public reveal, every card
played, the points taken, and the kitty only if it buried it (or the kitty was opened to all).
Nothing in an ``Observation`` depends on a card hidden from that seat."""

from __future__ import annotations

from dataclasses import dataclass

from .actions import DecisionKind
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
    return Observation(
        seat=seat,
        variant=s.rules.variant,
        deal=s.deal_no,
        phase=s.phase,
        to_act=_public_turn(s, seat),
        decision=s.decision if s.turn == seat else None,
        levels=s.levels,
        dealer=s.dealer,
        level=s.level,
        trump=s.trump,
        trump_fixed=s.ctx is not None,
        first_receiver=s.first_receiver,
        hand=s.hand(seat),
        hand_sizes=tuple(map(sum, s.hands)),
        cards_dealt=s.next_card,
        declarations=tuple((d.seat, d.cards) for d in s.declarations),
        public_kitty=tuple(s.kitty) if s.kitty_public else s.opened_kitty,
        drawn_kitty_card=s.drawn_card,
        my_kitty=tuple(sorted(s.kitty)) if mine else (),
        kitty_holder=s.kitty_owner,
        redeals=s.redeals,
        trick_leader=s.leader if s.trick else None,
        trick=s.trick,
        tricks=s.tricks,
        attacker_points=s.attacker_points,
        penalties=s.penalties,
        winner_team=s.winner_team,
        hard_duns=tuple(sorted(s.hard_duns)),
        dry_pot=s.dry_pot,
        match_points=s.match_points,
    )


__all__ = ["Observation", "observe", "CHANCE"]
